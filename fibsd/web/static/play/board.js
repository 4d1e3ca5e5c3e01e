// The `board:` line (protocol/board.md) read into an object, and drawn as SVG from the
// point of view of P1 (you, or the player you watch): P1's home board bottom right.

import { t } from "./i18n.js";

const SVG = "http://www.w3.org/2000/svg";

// Own point k (1..24) of `colour` is absolute slot k for O (1) and 25 - k for X (-1).
export function slotOf(ownPoint, colour) {
  return colour === 1 ? ownPoint : 25 - ownPoint;
}

// Absolute point text for the `move` command: bar and off by name.
export function absoluteText(ownPoint, colour) {
  if (ownPoint === 25) return "bar";
  if (ownPoint === 0) return "off";
  return String(slotOf(ownPoint, colour));
}

export function parseBoard(line) {
  const t = line.split(":");
  if (t.length !== 53 || t[0] !== "board") return null;
  const n = t.map((x) => Number.parseInt(x, 10));
  const view = {
    line,
    player: t[1], opponent: t[2], matchLength: n[3],
    playerScore: n[4], opponentScore: n[5],
    slots: n.slice(6, 32), turn: n[32],
    playerDice: [n[33], n[34]], opponentDice: [n[35], n[36]],
    cube: n[37], playerMayDouble: n[38] === 1, opponentMayDouble: n[39] === 1,
    wasDoubled: n[40] === 1, colour: n[41],
    playerHome: n[45], opponentHome: n[46], playerBar: n[47], opponentBar: n[48],
    canMove: n[49], postCrawford: n[51] === 1,
  };
  // Both sides in their own numbering (index 0..23 = points 1..24, 24 = the bar), as
  // movegen.js takes them.
  const c = view.colour;
  const mine = new Array(25).fill(0);
  const theirs = new Array(25).fill(0);
  for (let k = 1; k <= 24; k++) {
    const v = view.slots[slotOf(k, c)] * c;
    if (v > 0) mine[k - 1] = v;
    const w = view.slots[slotOf(k, -c)] * -c;
    if (w > 0) theirs[k - 1] = w;
  }
  mine[24] = view.playerBar;
  theirs[24] = view.opponentBar;
  view.mine = mine;
  view.theirs = theirs;
  return view;
}

// -- drawing -------------------------------------------------------------------------

const W = 40; // point width
const R = 17; // checker radius
const TOP = 10;
const BOTTOM = 430;
const LEFT = 10;
const BAR_X = 250;
const RIGHT_X = 290;
const TRAY_X = 540;

function el(name, attrs, parent) {
  const node = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  if (parent) parent.appendChild(node);
  return node;
}

// Left x of own point k, and whether it is in the top row.
export function pointPlace(k) {
  if (k <= 6) return [RIGHT_X + (6 - k) * W, false];
  if (k <= 12) return [LEFT + (12 - k) * W, false];
  if (k <= 18) return [LEFT + (k - 13) * W, true];
  return [RIGHT_X + (k - 19) * W, true];
}

// Where the `count`th checker (1 = the lowest) of a side stands on its own point `k`
// (25 its bar, 0 borne off): `side` 1 is P1, drawn at the bottom, -1 the other.
export function checkerXY(k, count, side) {
  const i = Math.max(0, Math.min(count, 5) - 1);
  if (k === 25) return [BAR_X + 20, side === 1 ? 250 + Math.min(i, 3) * 2 * R : 190 - Math.min(i, 3) * 2 * R];
  if (k === 0) return [TRAY_X + 25, side === 1 ? BOTTOM - 15 : TOP + 15];
  const [x, top] = pointPlace(side === 1 ? k : 25 - k);
  return [x + W / 2, top ? TOP + R + 2 + i * 2 * R : BOTTOM - R - 2 - i * 2 * R];
}

function stack(group, cx, top, count, cls) {
  const shown = Math.min(count, 5);
  for (let i = 0; i < shown; i++) {
    const cy = top ? TOP + R + 2 + i * 2 * R : BOTTOM - R - 2 - i * 2 * R;
    el("circle", { cx, cy, r: R, class: `checker ${cls}` }, group);
  }
  if (count > 5) {
    const cy = top ? TOP + R + 2 + 4 * 2 * R : BOTTOM - R - 2 - 4 * 2 * R;
    const label = el("text", { x: cx, y: cy + 5, class: "count" }, group);
    label.textContent = String(count);
  }
}

function die(parent, x, y, value, used = false) {
  const g = el("g", { class: used ? "dice used" : "dice" }, parent);
  el("rect", { x, y, width: 30, height: 30, rx: 5, class: "die" }, g);
  const spots = {
    1: [[15, 15]], 2: [[8, 8], [22, 22]], 3: [[8, 8], [15, 15], [22, 22]],
    4: [[8, 8], [22, 8], [8, 22], [22, 22]],
    5: [[8, 8], [22, 8], [15, 15], [8, 22], [22, 22]],
    6: [[8, 7], [22, 7], [8, 15], [22, 15], [8, 23], [22, 23]],
  }[value] || [];
  for (const [dx, dy] of spots) el("circle", { cx: x + dx, cy: y + dy, r: 3, class: "pip" }, g);
}

// Draws `view` into `svg`. `ui`: {mine, theirs} to show (the play in progress), the sets
// `movable` and `dests` of own points, `selected`, `dice` still to play of `rolled`.
export function drawBoard(svg, view, ui) {
  while (svg.firstChild) svg.removeChild(svg.firstChild);
  svg.setAttribute("viewBox", "0 0 600 440");
  svg.dataset.line = view.line;
  svg.dataset.slots = view.slots.join(",");
  svg.dataset.score = `${view.playerScore}-${view.opponentScore}`;
  svg.dataset.cube = String(view.cube);
  svg.dataset.turn = String(view.turn);
  const mine = ui.mine || view.mine;
  const theirs = ui.theirs || view.theirs;
  svg.dataset.shown = `${mine.join(",")}|${theirs.join(",")}`; // with the play in progress
  el("rect", { x: 0, y: 0, width: 600, height: 440, class: "frame" }, svg);
  el("rect", { x: LEFT, y: TOP, width: 240, height: 420, class: "felt" }, svg);
  el("rect", { x: RIGHT_X, y: TOP, width: 240, height: 420, class: "felt" }, svg);
  el("rect", { x: BAR_X, y: TOP, width: 40, height: 420, class: "bar" }, svg);
  const myClass = view.colour === 1 ? "o" : "x";
  const theirClass = view.colour === 1 ? "x" : "o";
  for (let k = 1; k <= 24; k++) {
    const [x, top] = pointPlace(k);
    const g = el("g", { class: "point", "data-point": k, tabindex: -1, role: "button",
                        "aria-label": `${t("point.label", { k })}${held(mine[k - 1], "point.yours")}${held(theirs[24 - k], "point.theirs")}` },
             svg);
    const tip = top ? TOP + 170 : BOTTOM - 170;
    const base = top ? TOP : BOTTOM;
    el("polygon", { points: `${x},${base} ${x + W},${base} ${x + W / 2},${tip}`,
                    class: `tri ${k % 2 ? "odd" : "even"}` }, g);
    el("rect", { x, y: top ? TOP : BOTTOM - 200, width: W, height: 200, class: "hit" }, g);
    const label = el("text", { x: x + W / 2, y: top ? TOP - 1 : BOTTOM + 9, class: "num" }, g);
    label.textContent = String(k);
    if (mine[k - 1]) stack(g, x + W / 2, top, mine[k - 1], myClass);
    const opp = theirs[24 - k];
    if (opp) stack(g, x + W / 2, top, opp, theirClass);
    mark(g, k, ui);
  }
  // The bar: mine below the middle, theirs above.
  const bar = el("g", { class: "point", "data-point": 25, tabindex: -1, role: "button",
                        "aria-label": `${t("point.bar")}${held(mine[24], "point.yours")}${held(theirs[24], "point.theirs")}` },
             svg);
  el("rect", { x: BAR_X, y: 230, width: 40, height: 200, class: "hit" }, bar);
  for (let i = 0; i < Math.min(mine[24], 4); i++) {
    el("circle", { cx: BAR_X + 20, cy: 250 + i * 2 * R, r: R, class: `checker ${myClass}` }, bar);
  }
  if (mine[24] > 1) el("text", { x: BAR_X + 20, y: 255, class: "count" }, bar).textContent = String(mine[24]);
  mark(bar, 25, ui);
  for (let i = 0; i < Math.min(theirs[24], 4); i++) {
    el("circle", { cx: BAR_X + 20, cy: 190 - i * 2 * R, r: R, class: `checker ${theirClass}` }, svg);
  }
  if (theirs[24] > 1) el("text", { x: BAR_X + 20, y: 195, class: "count" }, svg).textContent = String(theirs[24]);
  // The trays: borne-off checkers; mine bottom (a click there bears off).
  const off = el("g", { class: "point", "data-point": 0, tabindex: -1, role: "button",
                        "aria-label": t("point.off") }, svg);
  el("rect", { x: TRAY_X, y: 250, width: 50, height: 180, class: "tray hit" }, off);
  // A checker being moved (`ui.held`: 1 P1's, -1 the other's) is neither here nor off.
  const myOff = 15 - mine.reduce((a, b) => a + b, 0) - (ui.held === 1 ? 1 : 0);
  const theirOff = 15 - theirs.reduce((a, b) => a + b, 0) - (ui.held === -1 ? 1 : 0);
  for (let i = 0; i < myOff; i++) {
    el("rect", { x: TRAY_X + 5, y: BOTTOM - 10 - i * 11, width: 40, height: 9, class: `slab ${myClass}` }, off);
  }
  mark(off, 0, ui);
  el("rect", { x: TRAY_X, y: TOP, width: 50, height: 180, class: "tray" }, svg);
  for (let i = 0; i < theirOff; i++) {
    el("rect", { x: TRAY_X + 5, y: TOP + 1 + i * 11, width: 40, height: 9, class: `slab ${theirClass}` }, svg);
  }
  // The cube: in the middle when nobody owns it, else on its owner's side.
  const owner = view.playerMayDouble && !view.opponentMayDouble ? 1
    : view.opponentMayDouble && !view.playerMayDouble ? -1 : 0;
  const cy = owner === 1 ? 385 : owner === -1 ? 25 : 205;
  const cube = el("g", { class: "cube", id: "cube" }, svg);
  el("rect", { x: TRAY_X + 7, y: cy, width: 36, height: 36, rx: 4 }, cube);
  el("text", { x: TRAY_X + 25, y: cy + 24 }, cube).textContent = String(view.cube === 1 ? 64 : view.cube);
  // Dice: P1's on the right half, P2's on the left.
  if (view.playerDice[0]) {
    // The whole roll (four dice of a double while it is played), used ones dimmed.
    const rolled = ui.rolled || view.playerDice;
    const left = (ui.dice || rolled).slice();
    rolled.forEach((v, i) => {
      const k = left.indexOf(v);
      if (k >= 0) left.splice(k, 1);
      die(svg, RIGHT_X + 40 + i * 38, 205, v, k < 0);
    });
  } else if (view.opponentDice[0]) {
    view.opponentDice.forEach((v, i) => die(svg, LEFT + 80 + i * 38, 205, v));
  }
}

// The position in words, for the screen-reader mode: each side's checkers by point (in
// the bottom player's numbering, as the board's labels), on the bar and borne off.
export function describe(view, ui, names) {
  // `own`: a side in its own numbering; `shown(k)`: its point k in the bottom player's.
  const side = (name, own, shown) => {
    const at = [];
    for (let k = 1; k <= 24; k++) if (own[k - 1]) at.push([shown(k), own[k - 1]]);
    const words = at.sort((p, q) => q[0] - p[0]).map(([k, n]) => t("reader.on", { n, point: k }));
    if (own[24]) words.push(t("reader.bar", { n: own[24] }));
    const off = 15 - own.reduce((x, y) => x + y, 0);
    if (off) words.push(t("reader.off", { n: off }));
    return t("reader.side", { name, words: words.join(", ") || t("reader.none") });
  };
  return `${side(names[0], ui.mine || view.mine, (k) => k)} `
    + `${side(names[1], ui.theirs || view.theirs, (k) => 25 - k)}`;
}

// What a point holds, for its label: read by screen readers.
function held(count, whose) {
  return count ? `, ${t(whose, { n: count })}` : "";
}

function mark(group, k, ui) {
  if (ui.movable && ui.movable.has(k)) group.classList.add("movable");
  if (ui.selected === k) {
    group.classList.add("selected");
    group.setAttribute("aria-pressed", "true");
  }
  if (ui.dests && ui.dests.has(k)) group.classList.add("dest");
  if ((ui.movable && ui.movable.has(k)) || (ui.dests && ui.dests.has(k))) {
    group.setAttribute("tabindex", "0");
  }
}
