// The server's game lines in the reader's language: each pattern names a catalog key
// ("line.*") and its groups fill the key's placeholders in order. The wire stays English
// (clients parse it); only what the page shows is translated. Pure: tests run it in Node.

const N = "([A-Za-z_]+)";
const SAYINGS = [
  [/^It's your turn to roll or double\.$/, "line.to_roll", []],
  [/^It's your turn to move\.$/, "line.to_move", []],
  [/^Please move ([0-9]) pieces?\.$/, "line.please_move", ["n"]], // "1 piece": line.please_move_one
  [new RegExp(`^Starting a new game with ${N}\\.$`), "line.new_game", ["name"]],
  [new RegExp(`^You rolled ([1-6]), ${N} rolled ([1-6])$`), "line.opening", ["mine", "name", "theirs"]],
  [new RegExp(`^${N} makes the first move\\.$`), "line.first_move", ["name"]],
  [/^The number on the doubling cube is now ([0-9]+)$/, "line.cube_now", ["value"]],
  [/^You roll ([1-6]) and ([1-6])\.$/, "line.you_roll", ["a", "b"]],
  [new RegExp(`^${N} rolls ([1-6]) and ([1-6])\\.$`), "line.rolls", ["name", "a", "b"]],
  [/^You can't move\.$/, "line.you_cant_move", []],
  [new RegExp(`^${N} can't move\\.$`), "line.cant_move", ["name"]],
  [/^The only possible move is (.*) \.$/, "line.only_move", ["move"]],
  [new RegExp(`^${N} moves (.*) \\.$`), "line.moves", ["name", "move"]],
  [new RegExp(`^${N} doubles\\. Type 'accept' or 'reject'\\.$`), "line.doubles", ["name"]],
  [new RegExp(`^You double\\. Please wait for ${N} to accept or reject\\.$`), "line.you_double", ["name"]],
  [/^You accept the double\. The cube shows ([0-9]+)\.$/, "line.you_accept", ["value"]],
  [new RegExp(`^${N} accepts the double\\. The cube shows ([0-9]+)\\.$`), "line.accepts", ["name", "value"]],
  [/^You reject\. The game continues\.$/, "line.you_reject_resign", []],
  [new RegExp(`^${N} wants to resign\\. You will win ([0-9]+) (points?)\\. Type 'accept' or 'reject'\\.$`), "line.resign_offer", ["name", "points", "unit"]],
  [new RegExp(`^You want to resign\\. ${N} will win ([0-9]+) (points?)\\.$`), "line.you_resign", ["name", "points", "unit"]],
  [new RegExp(`^${N} gives up\\. You win ([0-9]+) (points?)\\.$`), "line.gives_up", ["name", "points", "unit"]],
  [new RegExp(`^You give up\\. ${N} wins ([0-9]+) (points?)\\.$`), "line.you_give_up", ["name", "points", "unit"]],
  [/^You accept and win ([0-9]+) (points?)\.$/, "line.you_accept_win", ["points", "unit"]],
  [new RegExp(`^${N} accepts and wins ([0-9]+) (points?)\\.$`), "line.accepts_win", ["name", "points", "unit"]],
  [/^You win the game and get ([0-9]+) (points?)\. Congratulations!$/, "line.you_win_game", ["points", "unit"]],
  [new RegExp(`^${N} wins the game and gets ([0-9]+) (points?)\\. Sorry\\.$`), "line.wins_game", ["name", "points", "unit"]],
  [/^You win the ([0-9]+) point match ([0-9]+)-([0-9]+) \.$/, "line.you_win_match", ["n", "a", "b"]],
  [new RegExp(`^${N} wins the ([0-9]+) point match ([0-9]+)-([0-9]+) \\.$`), "line.wins_match", ["name", "n", "a", "b"]],
  [/^Type 'join' if you want to play the next game, type 'leave' if you don't\.$/, "line.join_next", []],
  [new RegExp(`^score in ([0-9]+) point match: ${N}-([0-9]+) ${N}-([0-9]+)$`), "line.score", ["n", "name", "a", "other", "b"]],
];

// The text of `key` in `catalog` with its {placeholders} filled from `values`; `key_one`
// instead when the count `n` is 1 and the catalog has it (French "1 point", "1 pion").
export function fill(catalog, key, values = {}) {
  const one = Number(values.n) === 1 && catalog[`${key}_one`];
  const text = one || (catalog[key] ?? key);
  return text.replace(/\{(\w+)\}/g, (whole, name) => (name in values ? values[name] : whole));
}

// `line` as `t` (i18n.js) says it, or `line` itself when no pattern knows it.
export function say(line, t) {
  for (const [pattern, key, names] of SAYINGS) {
    const found = pattern.exec(line);
    if (found) return t(key, Object.fromEntries(names.map((name, i) => [name, found[i + 1]])));
  }
  return line;
}

export const KEYS = SAYINGS.map(([, key, names]) => [key, names]);
