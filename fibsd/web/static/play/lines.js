// What the server's text lines mean to the page: patterns of the lines it acts on, and
// where a line goes (protocol/web.md, "The web client"). Pure: tests/web/test_lines_js.py
// runs it under Node over the protocol catalogue's examples.

export const INVITATION = /^([A-Za-z_]+) wants to (play a [0-9]+ point match|play an unlimited match|resume a saved match) with you\.$/;
export const MOVES = /^([A-Za-z_]+) moves (.*) \.$/;
export const OFFER = /^[A-Za-z_]+ (wants to resign\. You will win [0-9]+ points?|doubles)\. Type 'accept' or 'reject'\.$/;
export const WAIT = /^You (double|want to resign)/;
export const ANSWERED = /^(You|[A-Za-z_]+) (accepts?|rejects?|gives? up)\b/;
export const MATCH_END = /^(You win|[A-Za-z_]+ wins) the [0-9]+ point match/;
export const STARTS = /^(\*\* You are now playing|\*\* Player [A-Za-z_]+ has joined you|You are now playing with|[A-Za-z_]+ has joined you\.)/;
const WATCHES = /^You're now watching /;
export const SAVED = /^(\*\* You terminated the game|\*\* Player [A-Za-z_]+ has left the game|\*\* [A-Za-z_]+ left the game; |\*\* [A-Za-z_]+ drops connection\. The game)/;
export const DICE = /^[A-Za-z_]+ (?:rolls? [1-6] and [1-6]\.|rolled [1-6], )/;
export const CANT_MOVE = /^([A-Za-z_]+) can't move\.$/;
export const GAME_OVER = /^(You|[A-Za-z_]+) (wins? the game|accepts? and wins?|gives? up)\b/;
export const SCORE = /^(?:You|([A-Za-z_]+)) wins? the [0-9]+ point match ([0-9]+)-([0-9]+) \.$/;
// The last board of a game still shows the score before it (protocol/board.md 3.1).
export const GAME_POINTS = /^(?:You win the game and get|([A-Za-z_]+) wins the game and gets) ([0-9]+) points?\./;
export const TO_ROLL = "It's your turn to roll or double.";
export const BOARDSTYLE = /^Value of 'boardstyle' is ([0-9]+)$/;
export const SAVED_HEADER = "  opponent          matchlength   score (your points first)";
export const SAVED_ROW = /^(\*\*|  | \*)([A-Za-z_]+) +([0-9]+|unlimited) +([0-9]+) - +([0-9]+)$/;
export const ARCHIVE = /^(?:Finished matches of [A-Za-z_]+, newest first|#([0-9]+) [0-9]{4}-|Type 'archive )/;

// The lines of the match you play or watch (protocol/play.md); they go under the board.
const GAME = new RegExp("^(?:" + [
  "Starting a new game with ", "\\S+ rolled [1-6], ", "It's your turn ", "\\S+ makes the first move",
  "The number on the doubling cube", "\\S+ rolls? [1-6] and [1-6]\\.", "Please move ",
  "\\S+ can't move\\.", "The only possible move", "Bearing off:", "[A-Za-z_]+ moves ", "Done\\.$",
  "\\S+ doubles?[. ]", "\\S+ accepts? ", "\\S+ rejects?\\. ", "\\S+ gives? up\\.",
  "\\S+ wants? to resign\\.", "\\S+ wins? the game", "score in ", "Type 'join' if you want",
  "\\S+ wins? the [0-9]+ point match", "You're now watching ", "You are now playing with",
  "[A-Za-z_]+ has joined you\\.", "\\*\\* You are now playing", "\\*\\* Player \\S+ has (?:joined|left)",
  "\\*\\* You terminated", "\\*\\* \\S+ left the game; ", "\\*\\* \\S+ drops connection\\. The game",
  "turn: ", "match length: ",
  "points for ", "\\*\\* Your clock", "\\*\\* The clock of ", "\\*\\* Please act: ", "\\*\\* \\S+ has not acted for a while", "\\*\\* You claimed the match",
  "\\*\\* \\S+ claimed the match", "\\*\\* \\S+ lost the connection; the match waits ",
  "\\*\\* \\S+ is back; the match goes on",
].join("|") + ")");

// `** ` lines that inform rather than refuse: shown as notices, not errors.
const NOTICE = new RegExp("^\\*\\* (?:" + [
  "You (?:invited|tell|say to|shout|whisper|kibitz|gag|ungag|blind|unblind|stop watching|allow|use|insist|agree|would|want|will|won't|are now)\\b",
  "You're now", "You'll",
  "You don't (?:allow|agree|gag|blind)", "[0-9]+ users? heard you", "Player \\S+ has",
  "\\S+ left the game; ", "\\S+ drops connection", "\\S+ lost the connection", "\\S+ is back; ",
  "The board will", "The board won't", "Forced moves", "Your terminal", "Will ", "Won't ",
  "Waiting for", "FINALLY", "Gagged", "Blinded", "Warning", "System administrator", "All running",
  "It will be back", "\\S+ changed the invitation", "There are no messages", "\\S+ is already logged in",
  "Alert from ", "\\S+ was kicked off", "Banned ", "Lifted the ban", "Bans:", "No bans\\.",
  "(?:name|address) \\S+ until ", "Changed the password", "Renamed ", "Deleted the account",
  "Reloaded the MOTD", "The server will (?:shut down|wrap)", "The shutdown was cancelled",
  "The admin log is empty", "Admin log:", "[A-Z][a-z]{2} [A-Z][a-z]{2} [ 0-9]{2} [0-9:]{8} [0-9]{4} ",
  "User \\S+ authenticated", "Last login:", "Please wait for \\S+ to join too",
  "Your [0-9]+-point match with \\S+ (?:was adjudicated|ended while you were away)", "With a clock: ",
  "This match has no clock",
].join("|") + ")");

// "game", "error" or "notice": where a line goes and how it looks.
export function kindOf(line, where) {
  const inMatch = ["playing", "watching", "match-over"].includes(where);
  if (GAME.test(line) && (inMatch || STARTS.test(line) || WATCHES.test(line))) return "game";
  if (line.startsWith("** ") && !NOTICE.test(line)) return "error";
  return "notice";
}
