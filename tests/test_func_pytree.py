"""torchweb.utils._pytree (what torch.func flattens with) against torch.utils._pytree: the
leaves, the TreeSpec's repr and equality, rebuilding, tree_map and the prefix broadcast that
vmap's in_dims / out_dims use."""

import collections

import torch.utils._pytree as theirs

import torchweb.utils._pytree as ours

Point = collections.namedtuple("Point", "x y")
TREES = [1, None, (1,), [1, (2, 3)], {"b": 1, "a": [2, None]}, collections.OrderedDict(z=1, y=(2,)),
         Point(1, [2, 3]), {"p": Point((1, 2), {"q": 3})}, (), [[], {}]]


def test_flatten_unflatten_and_repr_match_pytorch():
    for tree in TREES:
        leaves, spec = ours.tree_flatten(tree)
        t_leaves, t_spec = theirs.tree_flatten(tree)
        assert leaves == t_leaves, tree
        assert repr(spec) == repr(t_spec), tree
        assert spec.num_leaves == t_spec.num_leaves
        rebuilt = ours.tree_unflatten(leaves, spec)
        assert rebuilt == tree and type(rebuilt) is type(tree)
        assert ours.tree_map(lambda v: v if v is None else v * 10, tree) == \
            theirs.tree_map(lambda v: v if v is None else v * 10, tree)


def test_spec_equality_and_prefix_broadcast():
    assert ours.tree_structure((1, [2])) == ours.tree_structure((5, [6]))
    assert ours.tree_structure((1, [2])) != ours.tree_structure((1, (2,)))
    assert ours.tree_structure({"a": 1}) != ours.tree_structure({"b": 1})
    for prefix, tree in [(0, (1, (2, 3))), ((0, None), (1, (2, 3))), ((0, (1, None)), (1, (2, 3))),
                         ((0,), (1, (2, 3))), ({"a": 0}, {"a": 1, "b": 2}), ([0, 1], (1, 2))]:
        assert ours._broadcast_to_and_flatten(prefix, ours.tree_structure(tree)) == \
            theirs._broadcast_to_and_flatten(prefix, theirs.tree_structure(tree)), (prefix, tree)
