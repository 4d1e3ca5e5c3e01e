// Legal moves for the web client's highlighting: which single checker moves may come
// next, given the checkers and the dice still to play. Pure (no DOM), so a test runs
// it under Node against the rules engine on gnubg's answers (tests/web/test_movegen_js.py).
//
// A side is an array of 25 counts in its own numbering: index 0..23 = points 1..24,
// index 24 = the bar. A move is [from, to] in own points: from 25 = the bar, to 0 = off.
// The rules (../../../../protocol/play.md, shared rules.md): play as many dice as can be
// played; when only one of two different dice can be played, the larger if either can.

const BAR = 24;

export function pips(side) {
  let total = 0;
  for (let i = 0; i < 25; i++) total += side[i] * (i + 1);
  return total;
}

function allHome(mine) {
  if (mine[BAR]) return false;
  for (let i = 6; i < 24; i++) if (mine[i]) return false;
  return true;
}

// The single moves one die allows, without looking further ahead.
function stepsFor(mine, theirs, die) {
  const steps = [];
  if (mine[BAR]) {
    const to = 25 - die;
    if (theirs[24 - to] < 2) steps.push([25, to]);
    return steps;
  }
  const home = allHome(mine);
  for (let from = 24; from >= 1; from--) {
    if (!mine[from - 1]) continue;
    const to = from - die;
    if (to >= 1) {
      if (theirs[24 - to] < 2) steps.push([from, to]);
    } else if (home) {
      let higher = false;
      for (let p = from + 1; p <= 6; p++) if (mine[p - 1]) higher = true;
      if (to === 0 || !higher) steps.push([from, 0]);
    }
  }
  return steps;
}

// The position after one move: [mine, theirs] (new arrays); a blot hit goes to the bar.
export function apply(mine, theirs, [from, to]) {
  const m = mine.slice();
  const t = theirs.slice();
  m[from === 25 ? BAR : from - 1]--;
  if (to >= 1) {
    m[to - 1]++;
    if (t[24 - to] === 1) {
      t[24 - to] = 0;
      t[BAR]++;
    }
  }
  return [m, t];
}

function without(dice, die) {
  const rest = dice.slice();
  rest.splice(rest.indexOf(die), 1);
  return rest;
}

// How many of `dice` can be played from here, at most.
function mostPlayable(mine, theirs, dice, memo) {
  if (!dice.length) return 0;
  const key = mine.join(",") + "|" + theirs.join(",") + "|" + dice.join(",");
  if (memo.has(key)) return memo.get(key);
  let best = 0;
  for (const die of new Set(dice)) {
    for (const step of stepsFor(mine, theirs, die)) {
      const [m, t] = apply(mine, theirs, step);
      best = Math.max(best, 1 + mostPlayable(m, t, without(dice, die), memo));
      if (best === dice.length) break;
    }
    if (best === dice.length) break;
  }
  memo.set(key, best);
  return best;
}

// The dice of a roll as the list still to play: four of a double.
export function diceOf(d1, d2) {
  return d1 === d2 ? [d1, d1, d1, d1] : [d1, d2];
}

// Every single move that may come next: [{from, to, die}], given the dice still to play
// and `rolled`, the whole roll (for the larger-die rule, which looks at the roll).
export function nextSteps(mine, theirs, dice, rolled = dice) {
  const memo = new Map();
  const most = mostPlayable(mine, theirs, dice, memo);
  if (!most) return [];
  const found = [];
  for (const die of new Set(dice)) {
    for (const step of stepsFor(mine, theirs, die)) {
      const [m, t] = apply(mine, theirs, step);
      if (1 + mostPlayable(m, t, without(dice, die), memo) === most) {
        found.push({ from: step[0], to: step[1], die });
      }
    }
  }
  // Only one die of two different ones can be played: the larger, if it can be.
  const twoDifferent = rolled.length === 2 && rolled[0] !== rolled[1];
  if (twoDifferent && dice.length === 2 && most === 1) {
    const larger = Math.max(...dice);
    if (found.some((s) => s.die === larger)) return found.filter((s) => s.die === larger);
  }
  return found;
}

// Every distinct position a legal play reaches ([mine, theirs] pairs), for the tests.
export function legalResults(mine, theirs, d1, d2) {
  const results = new Map();
  const seen = new Set();
  const rolled = diceOf(d1, d2);
  if (!nextSteps(mine, theirs, rolled).length) return [];
  const walk = (m, t, dice) => {
    const key = m.join(",") + "|" + t.join(",") + "|" + dice.join(",");
    if (seen.has(key)) return;
    seen.add(key);
    const steps = nextSteps(m, t, dice, rolled);
    if (!steps.length) {
      results.set(m.join(",") + "|" + t.join(","), [m, t]);
      return;
    }
    for (const s of steps) {
      const [m2, t2] = apply(m, t, [s.from, s.to]);
      walk(m2, t2, without(dice, s.die));
    }
  };
  walk(mine, theirs, rolled);
  return [...results.values()];
}

// The play of a roll that allows only one (a single position reachable), as its single
// moves [{from, to, die}] in order, for the client to make by itself; else null.
export function forcedPlay(mine, theirs, d1, d2) {
  if (legalResults(mine, theirs, d1, d2).length !== 1) return null;
  const rolled = diceOf(d1, d2);
  let [m, t, dice] = [mine, theirs, rolled];
  const steps = [];
  for (let next = nextSteps(m, t, dice, rolled); next.length; next = nextSteps(m, t, dice, rolled)) {
    [m, t] = apply(m, t, [next[0].from, next[0].to]);
    dice = without(dice, next[0].die);
    steps.push(next[0]);
  }
  return steps;
}
