// The other side's moves shown checker by checker before the board that follows them is
// drawn (your own you made yourself). Speed under Settings, kept in the browser.

import { checkerXY, drawBoard } from "./board.js";
import { apply } from "./movegen.js";

export const SPEEDS = { off: 0, slow: 600, normal: 280, fast: 120 }; // ms per checker
const KEY = "fibsd.speed";

export function speedName() {
  const name = localStorage.getItem(KEY);
  return name in SPEEDS ? name : "normal";
}

export function setSpeed(name) {
  localStorage.setItem(KEY, name);
}

const frame = () => new Promise((resolve) => requestAnimationFrame(resolve));

// Moves `words` (absolute FIBS points: "8-3", "bar-22", "6-off") of `side` (1 the player
// at the bottom of `before`, -1 the one at the top) over the board `before` in `svg`.
// Resolves when done; at once when animation is off or the words do not fit the board.
export async function animateMove(svg, before, side, words) {
  const ms = SPEEDS[speedName()];
  const colour = side * before.colour;
  const own = (w) => (w === "bar" ? 25 : w === "off" ? 0 : colour === 1 ? Number(w) : 25 - Number(w));
  let [mover, other] = side === 1 ? [before.mine, before.theirs] : [before.theirs, before.mine];
  for (const word of words) {
    if (!ms) return;
    const [from, to] = word.split("-").map(own);
    if (!(from >= 1 && from <= 25 && to >= 0 && to <= 24) || !mover[from === 25 ? 24 : from - 1]) return;
    const start = checkerXY(from, mover[from === 25 ? 24 : from - 1], side);
    const lifted = mover.slice();
    lifted[from === 25 ? 24 : from - 1]--;
    drawBoard(svg, before, side === 1 ? { mine: lifted, theirs: other, held: 1 }
      : { mine: other, theirs: lifted, held: -1 });
    [mover, other] = apply(mover, other, [from, to]);
    const end = checkerXY(to, to ? mover[to - 1] : 1, side);
    const ghost = document.createElementNS("http://www.w3.org/2000/svg", "circle");
    ghost.setAttribute("r", "17");
    ghost.setAttribute("class", `checker moving ${colour === 1 ? "o" : "x"}`);
    svg.appendChild(ghost);
    const t0 = performance.now();
    for (let t = 0; t < 1; t = Math.min(1, (performance.now() - t0) / ms)) {
      ghost.setAttribute("cx", String(start[0] + (end[0] - start[0]) * t));
      ghost.setAttribute("cy", String(start[1] + (end[1] - start[1]) * t));
      await frame();
    }
    ghost.remove();
  }
}
