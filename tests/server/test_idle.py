"""Every session's idle timeout on one timer (fibsd.server.idle): each session still
times out exactly when its own timer would have."""

from __future__ import annotations

from twisted.internet.task import Clock

from fibsd.server.idle import IdleDeadlines
from tests.helpers import FakeServer
from tests.server.test_social import clip_user


class Sleeper:
    def __init__(self, name: str, out: list[tuple[str, float]], clock: Clock) -> None:
        self.name, self.out, self.clock = name, out, clock

    def timed_out(self) -> None:
        self.out.append((self.name, self.clock.seconds()))


def sleepers(clock: Clock, *names: str) -> tuple[list[tuple[str, float]], list[Sleeper]]:
    out: list[tuple[str, float]] = []
    return out, [Sleeper(name, out, clock) for name in names]


def test_each_session_times_out_at_its_own_deadline_on_one_timer() -> None:
    clock = Clock()
    idle = IdleDeadlines(clock)
    out, (a, b, c) = sleepers(clock, "a", "b", "c")
    idle.restart(a, 10)
    clock.advance(3)
    idle.restart(b, 10)
    idle.restart(c, 10)
    clock.advance(4)
    idle.restart(a, 10)  # a's deadline moves from 10 to 17
    assert len(clock.getDelayedCalls()) == 1
    clock.advance(5.5)
    assert out == []
    clock.advance(0.5)
    assert out == [("b", 13.0), ("c", 13.0)]
    idle.forget(a)
    assert clock.getDelayedCalls() == []  # no session left: no timer
    clock.advance(100)
    assert out == [("b", 13.0), ("c", 13.0)]
    idle.restart(a, 10)
    clock.advance(10)
    assert out[-1] == ("a", 123.0)


def test_a_deadline_earlier_than_the_others_is_kept_in_order() -> None:
    """The wall clock set back (or a shorter timeout): the earlier deadline still
    fires first and on time."""
    clock = Clock()
    clock.advance(100)
    idle = IdleDeadlines(clock)
    out, (a, b) = sleepers(clock, "a", "b")
    idle.restart(a, 50)
    idle.restart(b, 20)
    clock.advance(20)
    assert out == [("b", 120.0)]
    clock.advance(30)
    assert out == [("b", 120.0), ("a", 150.0)]


def test_idle_users_hold_no_timer_each() -> None:
    server = FakeServer()
    clip_user(server, "alice")
    timers = len(server.clock.getDelayedCalls())
    for name in ("bob", "carol", "dave", "erin"):
        clip_user(server, name)
    assert len(server.clock.getDelayedCalls()) == timers
