"""A set made by unions that shares its parts instead of copying them.

A tensor's history (the saves a backward through it reaches) and its owners (the layers whose `.grad` it fills)
grow by one or two items per op: `h = h.exp()` repeated N times, or a layer list of N rows, made N frozensets of
up to N items each (quadratic memory: 1.4 GB for 800 statements of a loop body). A `SharedSet` node holds the
items added at that step and points at the sets it was made from, so a union costs O(1) and the items are listed
only when read (a backward, a carried-state check), once per node.
"""
from __future__ import annotations


class SharedSet:
    """An immutable set of items (compared by identity) built by `|`; iteration lists each item once."""

    __slots__ = ("own", "parts", "_flat", "_members")

    def __init__(self, own: tuple = (), parts: tuple = ()):
        self.own = own  # items added at this node
        self.parts = parts  # non-empty SharedSets this one contains
        self._flat = None  # the items in order, once listed
        self._members = None  # the same as a frozenset, once asked for membership

    @staticmethod
    def of(items) -> "SharedSet":
        if isinstance(items, SharedSet):
            return items
        own = tuple(items)
        return SharedSet(own) if own else EMPTY

    @staticmethod
    def union(sets) -> "SharedSet":
        """The union of several sets (SharedSets, sets or tuples): a node pointing at the non-empty ones."""
        parts, seen = [], set()
        for s in sets:
            s = SharedSet.of(s)
            if s is not EMPTY and id(s) not in seen:
                seen.add(id(s))
                parts.append(s)
        if not parts:
            return EMPTY
        if len(parts) == 1:
            return parts[0]
        return SharedSet((), tuple(parts))

    def __or__(self, other) -> "SharedSet":
        if isinstance(other, SharedSet):
            if other is EMPTY or other is self:
                return self
            if self is EMPTY:
                return other
            return SharedSet((), (self, other))
        own = tuple(other)
        if not own:
            return self
        return SharedSet(own, (self,) if self is not EMPTY else ())

    __ror__ = __or__

    def items(self) -> tuple:
        """Every item once: parts first (depth first, each node visited once), then the items added here."""
        if self._flat is not None:
            return self._flat
        out: dict = {}
        visited: set = set()
        # iterative: a chain of 10,000 ops is 10,000 nodes deep
        stack: list = [(self, False)]
        while stack:
            node, expanded = stack.pop()
            if expanded:
                for item in node.own:
                    out.setdefault(id(item), item)
                continue
            if id(node) in visited:
                continue
            visited.add(id(node))
            if node._flat is not None:
                for item in node._flat:
                    out.setdefault(id(item), item)
                continue
            stack.append((node, True))
            for part in reversed(node.parts):
                if id(part) not in visited:
                    stack.append((part, False))
        self._flat = tuple(out.values())
        return self._flat

    def __iter__(self):
        return iter(self.items())

    def __len__(self) -> int:
        return len(self.items())

    def __bool__(self) -> bool:
        return bool(self.own or self.parts)

    def __contains__(self, item) -> bool:
        if not (self.own or self.parts):
            return False
        if self._members is None:
            self._members = frozenset(self.items())  # the items hash by identity (dataclasses with eq=False)
        return item in self._members

    def __repr__(self) -> str:
        return f"SharedSet({list(self.items())!r})"


EMPTY = SharedSet()
