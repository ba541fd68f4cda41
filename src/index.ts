// The public client API and message codec. Filled in as the layers land.
export * from './codec/public.js';
