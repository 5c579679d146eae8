"""The stand-in's enumeration of a space over NumPy arrays against its one-config-at-a-time rule:
the same configs in the same order for restrictions of every form it turns element-wise (and,
or, not, chained comparisons, in, conditional expressions, min/max, ceil, a division), for one
that divides by zero on some configs and for a function among the strings. Prints "agree N" per
case and exits 0 when all agree (the arrays ran where they could: "arrays" or "one by one")."""
import sys

from kernel_tuner import _space

params = {
    "filter_height": list(range(3, 35, 6)),
    "block_size_x": [16 * i for i in range(1, 9)],
    "block_size_y": [2**i for i in range(6)],
    "tile_size_x": list(range(1, 9)),
    "tile_size_y": list(range(1, 9)),
    "use_padding": [0, 1],
    "read_only": [False, True],
}
cases = [
    ["use_padding==0 or (block_size_x % 32 != 0)"],
    ["block_size_x % 32 == 0 and tile_size_x in [1, 2, 4]", "not use_padding or read_only", "1 < tile_size_y <= 4",
     "(block_size_x if use_padding else block_size_y) > 8", "tile_size_y not in (3, 5)"],
    ["block_size_x // (tile_size_x - 1) > 4"],
    ["min(block_size_x, block_size_y * 16) >= 64", lambda p: p["tile_size_x"] != 3, "max(tile_size_x, tile_size_y) < 8"],
    ["block_size_x / tile_size_x >= 4.5", "ceil(block_size_x / 3) % 2 == 0", "filter_height * tile_size_y <= 96"],
]
failed = False
for i, restrictions in enumerate(cases):
    built = _space.build_restrictions(restrictions, params) + [_space.block_size_restriction(params, 1024)]
    arrays = _space.enumerate_space(params, built)
    saved = _space._VECTOR_FROM
    _space._VECTOR_FROM = 10**18  # one config at a time
    try:
        one_by_one = _space.enumerate_space(params, built)
    finally:
        _space._VECTOR_FROM = saved
    try:
        _space._enumerate_vectorized(list(params), [list(v) for v in params.values()], built)
        how = "arrays"
    except _space._Fallback:
        how = "one by one"
    same = arrays == one_by_one and all(type(a) is type(b) for x, y in zip(arrays, one_by_one) for a, b in zip(x, y))
    print(f"case {i}: {'agree' if same else 'DIFFER'} {len(arrays)} ({how})")
    failed |= not same
sys.exit(1 if failed else 0)
