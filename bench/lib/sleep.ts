/** A pause of the failover bench's loops (bench/failover.ts and its lib/failover-*.ts parts). */
export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
