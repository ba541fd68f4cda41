// rhea ships no typings for its internal modules; the cross-check tests use them loosely.
declare module 'rhea/lib/frames.js' {
  const frames: Record<string, unknown>;
  export default frames;
}
declare module 'rhea/lib/types.js' {
  const types: Record<string, unknown>;
  export default types;
}
