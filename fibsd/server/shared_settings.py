"""Toggles and ``set`` variables shared by every online user whose values are the same.

Most of the thousands of users online keep the same settings (the defaults, or a
client program's few choices): each user's own dict of 17 toggles and 7 variables was
about 720 bytes of an idle user's 6 KB (issue 26).  A user's settings are instead an
interned read-only mapping, one object for all users whose values are equal (in the same
order); a change replaces the user's mapping (``OnlineUser.set_toggles`` and
``set_variables``) and never writes into it.  A write into one raises ``TypeError``, so a
forgotten writer fails loudly instead of changing every other user's settings.

Interned mappings are held weakly: one that no user holds any more is dropped, so a
stranger trying combinations leaves at most one mapping per user online.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any, NoReturn, TypeVar
from weakref import WeakValueDictionary

K = TypeVar("K", bound=Hashable)
V = TypeVar("V", bound=Hashable)


class SharedSettings(dict[K, V]):
    """A dict that refuses every write: read it like any dict, replace it to change it."""

    __slots__ = ("__weakref__",)

    def _refuse(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise TypeError("shared settings are read-only: replace them "
                        "(OnlineUser.set_toggles or set_variables)")

    __setitem__ = __delitem__ = __ior__ = _refuse
    update = pop = popitem = clear = setdefault = _refuse

    def __reduce__(self) -> tuple[Any, ...]:
        """Copies and pickles are made through ``shared``, not item by item."""
        return shared, (dict(self),)


_interned: WeakValueDictionary[tuple[tuple[Any, Any], ...], SharedSettings[Any, Any]] = (
    WeakValueDictionary())


def shared(values: Mapping[K, V]) -> SharedSettings[K, V]:
    """The one read-only mapping equal to ``values``, with its keys in the same order."""
    key = tuple(values.items())
    found = _interned.get(key)
    if found is None:
        found = _interned[key] = SharedSettings(values)
    return found


def replaced(values: Mapping[K, V], changes: Mapping[K, V]) -> SharedSettings[K, V]:
    """``values`` with ``changes`` written over them (new keys last, as ``dict.update``)."""
    return shared({**values, **changes})
