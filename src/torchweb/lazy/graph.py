"""The graph of pending work: a storage whose values are an elementwise expression not yet run
holds it as `storage.pending` (a Node); every storage such an expression reads lists, in
`storage.readers`, the groups of pending storages that read it, so that writing it can run
them first (realize.py).

The pending readers of a buffer are registered by group (Node.group): a chain of ops over the
same inputs registers once, and nothing is unregistered when a pending storage dies or is
realized (entries with nothing pending left are dropped in bulk: _prune)."""

import weakref

from collections import namedtuple
from operator import call

# id -> group (Node.group) of every group with a storage pending, for realize_all() and the
# memory statistics: a pending storage is in exactly one group (groups whose storages all died
# or were realized are pruned in bulk when the dict outgrows _groups_limit[0]: prune_groups)
_groups = {}
_groups_limit = [64]


class Node(namedtuple("NodeFields", "key leaves scalars shape size storages group")):
    """One deferred op, and what the kernel of the expression rooted here needs, built from its
    children's as ops are recorded. key: its structure, (op name, class) then per argument a
    token, ("t", class, storage type) for a tensor read, ("s", "f") for a scalar (always read
    as f32), or an inlined child's key (class: the compute class the op reads that argument
    in); leaves: every tensor read (storage, stride, offset, dtype), in the order of a
    depth-first walk of the key's arguments (a tensor read twice appears twice); scalars:
    the scalar values in evaluation order (children's first; a tuple). Its value is float32:
    only those are deferred. Nodes never change their fields once made (consumers share them).
    storages: every buffer the expression reads, inlined nodes included (id -> storage); a
    node that reads no buffer its inlined child does not shares the child's dict, and its
    group: the weakrefs of the pending storages whose nodes share that dict, registered as
    one entry in each of those buffers' readers (so a chain of ops registers once; None for
    nodes made outside the recorders, which register none).
    inlined, the one attribute set later: taken into a consumer's expression already.
    ROWS (shared by all nodes): op name -> its elementwise table row, for the backends'
    run_fused (record.template registers the ops it defers).

    A tuple made in C, Node((key, leaves, scalars, shape, size, storages, group)), its fields
    read by C getters: every deferred op makes one, and a Python __init__ was a tenth of an
    op's bytecodes. Compared and hashed by identity, as an object."""

    __new__ = tuple.__new__
    __eq__, __ne__, __hash__ = object.__eq__, object.__ne__, object.__hash__
    inlined = False
    ROWS = {}


def register(storage, storages):
    """A group of its own for storage, about to be pending with a node that reads a buffer its
    inlined child does not, or inlines none: added to the registry and to the readers of every
    buffer the node reads (storages, its Node.storages). Returns the group (the node's).
    (Called before storage is pending: the prunes run before the group is added, or they
    would drop it.)"""
    group = [weakref.ref(storage)]
    gid = id(group)
    if len(_groups) >= _groups_limit[0]:
        prune_groups()
    _groups[gid] = group
    for leaf_storage in storages.values():
        readers = leaf_storage.readers
        if readers is None:
            leaf_storage.readers = {gid: group}
            leaf_storage.readers_limit = 64
        elif len(readers) < leaf_storage.readers_limit:
            readers[gid] = group
        else:
            prune(leaf_storage)
            leaf_storage.readers[gid] = group
    return group


def prune(storage):
    """Drop the groups of storage.readers with no storage pending any more. A pending storage
    that dies or is realized leaves its group's entry in the readers of what it read (dropping
    them each time costs each op more than this): long-lived inputs never written (weights in
    inference, say) would otherwise collect them without bound. Run when the dict outgrows
    storage.readers_limit, then twice what is left (at least 64): each entry is tested a
    bounded number of times however many stay pending. (The test inline: most groups are
    one op, whose storage is checked without a call.)"""
    storage.readers = readers = _with_pending(storage.readers)
    storage.readers_limit = max(64, 2 * len(readers))


def prune_groups():
    """Drop the groups with no storage pending any more from _groups (as prune)."""
    global _groups
    _groups = _with_pending(_groups)
    _groups_limit[0] = max(64, 2 * len(_groups))


def clear_groups():
    """Forget every group (all realized: realize_all)."""
    global _groups
    _groups = {}
    _groups_limit[0] = 64


def group_count():
    return len(_groups)


def _with_pending(groups):
    """The entries of groups (id -> group) with a storage still pending."""
    return {gid: group for gid, group in groups.items()
            if (s := group[-1]()) is not None and s.pending is not None or
            len(group) > 1 and any(map(_pending_in, group))}


def _pending_in(ref):
    s = ref()
    return s is not None and s.pending is not None


def pending_storages():
    """Every pending storage alive."""
    found = []
    for group in _groups.values():
        for s in filter(None, map(call, group)):   # (its live storages, the dead skipped in C)
            if s.pending is not None:
                found.append(s)
    return found


def pending_readers(storage):
    """The pending storages that read storage (its readers entry taken: they are about to run)."""
    readers = storage.readers
    storage.readers = None
    found = []
    for group in readers.values():
        for reader in filter(None, map(call, group)):
            if reader.pending is not None:
                found.append(reader)
    return found
