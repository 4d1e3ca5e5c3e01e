"""How the browser tests move checkers on /play: the first legal play of the roll shown
(the CLIP test bot's own choice, so a dice script gives the same match every time), by
clicking its points or by dragging with the mouse or a finger."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fibsd.rules.movegen import legal_plays
from fibsd.wire.board import Colour, parse_board, view_position

if TYPE_CHECKING:
    from tests.web.test_play_browser import Player


async def first_play(player: Player) -> list[tuple[int, int]]:
    """The first legal play of the roll shown, as (from, to) own points (25 bar, 0 off)."""
    line = await player.browser.script("return document.getElementById('board').dataset.line")
    view = parse_board(line)
    plays = legal_plays(view_position(view, Colour(view.colour)), view.player_dice)
    return [(move.src, move.dst) for move in plays[0].moves]


async def click_point(player: Player, point: int) -> None:
    await player.click(f"#board .point[data-point='{point}']")


async def play_by_clicking(player: Player, steps: list[tuple[int, int]]) -> None:
    for source, destination in steps:
        await click_point(player, source)
        await click_point(player, destination)


CENTRES = """
const board = arguments[0].getBoundingClientRect();
return [arguments[1], arguments[2]].map((k) => {
  const r = document.querySelector(`#board .point[data-point='${k}'] .hit`).getBoundingClientRect();
  return [Math.round(r.x + r.width / 2 - board.x - board.width / 2),
          Math.round(r.y + r.height / 2 - board.y - board.height / 2)];
});
"""


def drag(driver: Any, source: int, target: int, touch: bool) -> None:
    """Presses on point ``source``, moves to ``target`` in two strides and lets go there:
    with the mouse, or with a finger."""
    from selenium.webdriver.common.actions import interaction
    from selenium.webdriver.common.actions.action_builder import ActionBuilder
    from selenium.webdriver.common.actions.pointer_input import PointerInput

    board = driver.find_element("id", "board")
    (x1, y1), (x2, y2) = driver.execute_script(CENTRES, board, source, target)
    pointer = PointerInput(interaction.POINTER_TOUCH if touch else interaction.POINTER_MOUSE,
                           "finger" if touch else "mouse")
    builder = ActionBuilder(driver, mouse=pointer, duration=40)  # ms a stride takes
    builder.pointer_action.move_to(board, x1, y1).pointer_down()
    builder.pointer_action.move_to(board, (x1 + x2) // 2, (y1 + y2) // 2)
    builder.pointer_action.move_to(board, x2, y2).pointer_up()
    builder.perform()


async def play_by_dragging(player: Player, steps: list[tuple[int, int]], touch: bool) -> None:
    for source, destination in steps:
        await player.browser.run(drag, player.browser.driver, source, destination, touch)
