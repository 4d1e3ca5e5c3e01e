// Prints, for each number of failed tries on stdin, the lowest and highest delay (ms)
// clip.js `backoff` gives before the next try to reconnect, over many draws.
import { createInterface } from "node:readline";
import { backoff } from "../../../fibsd/web/static/play/clip.js";

for await (const line of createInterface({ input: process.stdin })) {
  const draws = Array.from({ length: 2000 }, () => backoff(Number(line)));
  process.stdout.write(`${Math.min(...draws)} ${Math.max(...draws)}\n`);
}
