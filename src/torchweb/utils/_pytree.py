"""Pytrees, as torch.utils._pytree has them: nested tuples, lists, dicts (OrderedDict and
defaultdict too) and namedtuples are nodes, everything else (tensors, numbers, None) is a leaf.
torch.func flattens its arguments and results with these; the TreeSpec's repr is PyTorch's, so
error messages that print a structure read the same."""

import collections

__all__ = ["TreeSpec", "LeafSpec", "tree_flatten", "tree_unflatten", "tree_leaves", "tree_structure",
           "tree_map", "tree_map_", "tree_map_only", "tree_all", "tree_any"]


def _is_namedtuple(x):
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def _node_kind(x):
    """(type name, context, children) for a node, or None for a leaf."""
    t = type(x)
    if t is tuple or t is list:
        return t, None, list(x)
    if _is_namedtuple(x):
        return collections.namedtuple, t, list(x)
    if t is dict or t is collections.OrderedDict:
        return t, list(x), list(x.values())
    if t is collections.defaultdict:
        return t, [x.default_factory, list(x)], list(x.values())
    return None


class TreeSpec:
    """The shape of a pytree: its node type, the context that rebuilds it (dict keys, the
    namedtuple class) and its children's specs."""

    def __init__(self, type, context, children_specs):
        self.type = type
        self.context = context
        self.children_specs = list(children_specs)
        self.num_leaves = sum(c.num_leaves for c in self.children_specs)

    @property
    def num_children(self):
        return len(self.children_specs)

    def is_leaf(self):
        return False

    def unflatten(self, leaves):
        return tree_unflatten(leaves, self)

    def __eq__(self, other):
        return (isinstance(other, TreeSpec) and type(self) is type(other) and self.type is other.type
                and self.context == other.context and self.children_specs == other.children_specs)

    def __hash__(self):
        return hash((self.type, repr(self.context), len(self.children_specs)))

    def __repr__(self, indent=0):
        head = f"TreeSpec({self.type.__name__}, {self.context}, ["
        indent += 2
        parts = [c.__repr__(indent) for c in self.children_specs]
        body = (",\n" + " " * indent).join(parts)
        return head + body + "])"


class LeafSpec(TreeSpec):
    def __init__(self):
        super().__init__(None, None, [])
        self.num_leaves = 1

    def is_leaf(self):
        return True

    def __eq__(self, other):
        return isinstance(other, LeafSpec)

    def __hash__(self):
        return 0

    def __repr__(self, indent=0):
        return "*"


def tree_flatten(tree, is_leaf=None):
    """(the leaves in order, the TreeSpec that puts them back)."""
    leaves = []

    def walk(x):
        kind = None if is_leaf is not None and is_leaf(x) else _node_kind(x)
        if kind is None:
            leaves.append(x)
            return LeafSpec()
        typ, context, children = kind
        return TreeSpec(typ, context, [walk(c) for c in children])

    spec = walk(tree)
    return leaves, spec


def tree_unflatten(leaves, treespec):
    leaves = list(leaves)
    if len(leaves) != treespec.num_leaves:
        raise ValueError(f"treespec.unflatten(leaves): `leaves` has length {len(leaves)} but the spec "
                         f"refers to a pytree that holds {treespec.num_leaves} items ({treespec}).")
    it = iter(leaves)

    def build(spec):
        if spec.is_leaf():
            return next(it)
        children = [build(c) for c in spec.children_specs]
        t = spec.type
        if t is tuple:
            return tuple(children)
        if t is list:
            return children
        if t is collections.namedtuple:
            return spec.context(*children)
        if t is collections.defaultdict:
            factory, keys = spec.context
            return collections.defaultdict(factory, zip(keys, children))
        return t(zip(spec.context, children))

    return build(treespec)


def tree_leaves(tree, is_leaf=None):
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree, is_leaf=None):
    return tree_flatten(tree, is_leaf)[1]


def tree_map(func, tree, *rests, is_leaf=None):
    leaves, spec = tree_flatten(tree, is_leaf)
    others = [tree_flatten(r, is_leaf)[0] for r in rests]
    return tree_unflatten([func(*xs) for xs in zip(leaves, *others)], spec)


def tree_map_(func, tree, *rests, is_leaf=None):
    leaves = tree_leaves(tree, is_leaf)
    others = [tree_leaves(r, is_leaf) for r in rests]
    for xs in zip(leaves, *others):
        func(*xs)
    return tree


def tree_map_only(type_or_types, func, tree, is_leaf=None):
    return tree_map(lambda x: func(x) if isinstance(x, type_or_types) else x, tree, is_leaf=is_leaf)


def tree_all(pred, tree, is_leaf=None):
    return all(map(pred, tree_leaves(tree, is_leaf)))


def tree_any(pred, tree, is_leaf=None):
    return any(map(pred, tree_leaves(tree, is_leaf)))


def _broadcast_to_and_flatten(tree, treespec):
    """tree (a prefix of treespec's structure: a leaf stands for its whole subtree) flattened to
    treespec's leaves, or None when tree is not such a prefix (vmap's in_dims / out_dims)."""
    out = []

    def walk(x, spec):
        if spec.is_leaf():
            if _node_kind(x) is not None:
                return False
            out.append(x)
            return True
        kind = _node_kind(x)
        if kind is None:
            out.extend([x] * spec.num_leaves)
            return True
        typ, context, children = kind
        if typ is not spec.type or context != spec.context or len(children) != spec.num_children:
            return False
        return all(walk(c, s) for c, s in zip(children, spec.children_specs))

    return out if walk(tree, treespec) else None
