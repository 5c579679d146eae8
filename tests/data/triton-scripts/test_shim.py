"""Unit tests of Tilescope's autotuner stand-in (tilescope_triton), run by tst_cli_triton with a
Python that has Triton and NumPy and the stand-in on its path; no GPU. With TILESCOPE_CLI set,
the problems written are also read back by `tilescope-cli space`."""

import json
import math
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np
import triton

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import kernels  # noqa: E402
from fakes import Tensor, tensor  # noqa: E402
from tilescope_triton import _arguments, _autotuner, _cli, _expr, _grid, _kernel, _problem, _source, _space  # noqa: E402
from tilescope_triton._common import Refusal  # noqa: E402


def matmul_call(m=512, n=256, k=128, transposed_b=False, activation=""):
    a = tensor(np.random.default_rng(1).random((m, k)), np.float16)
    if transposed_b:
        b = tensor(np.random.default_rng(2).random((n, k)), np.float16).T
    else:
        b = tensor(np.random.default_rng(2).random((k, n)), np.float16)
    c = tensor(np.zeros((m, n)), np.float16)
    args = (a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1))
    grid = lambda META: (triton.cdiv(m, META["BLOCK_SIZE_M"]) * triton.cdiv(n, META["BLOCK_SIZE_N"]), )  # noqa: E731
    return args, {"grid": grid, "warmup": False, "ACTIVATION": activation}


def space_of(tuner, args, kwargs, expand=False):
    kernel = _kernel.Kernel(tuner)
    params, options = kernel.bind(args, kwargs)
    configs = _autotuner.candidates(tuner, kernel, kwargs, expand)
    return kernel, params, _space.Space(kernel, configs, params, options)


class Grid(unittest.TestCase):

    def test_cdiv_product_is_traced(self):
        args, kwargs = matmul_call()
        kernel, params, space = space_of(kernels.matmul_kernel, args, kwargs)
        expressions, grids = _grid.grid_expressions(kwargs["grid"], space.metas, space.names, space.rows, "matmul")
        self.assertEqual(expressions[1:], ["1", "1"])
        self.assertIn("BLOCK_SIZE_M", expressions[0])
        self.assertIn("BLOCK_SIZE_N", expressions[0])
        self.assertNotIn(" if ", expressions[0])
        for row, g in zip(space.rows, grids):
            values = dict(zip(space.names, row))
            self.assertEqual(g, [math.ceil(512 / values["BLOCK_SIZE_M"]) * math.ceil(256 / values["BLOCK_SIZE_N"]), 1,
                                 1])
            self.assertEqual(_expr.evaluate(expressions[0], values), g[0])

    def test_tuple_and_two_dimensions(self):
        names, rows = ["BLOCK"], [(64, ), (128, )]
        metas = [{"BLOCK": 64, "n": 1000}, {"BLOCK": 128, "n": 1000}]
        self.assertEqual(_grid.grid_expressions((7, 3), metas, names, rows, "k")[0], ["7", "3", "1"])
        e, g = _grid.grid_expressions(lambda META: (12, triton.cdiv(META["n"], META["BLOCK"])), metas, names, rows, "k")
        self.assertEqual(e, ["12", "(1000 + (BLOCK - 1)) // BLOCK", "1"])
        self.assertEqual(g, [[12, 16, 1], [12, 8, 1]])

    def test_ceil_and_operators(self):
        names, rows = ["B", "S"], [(64, 1), (128, 2), (256, 4)]
        metas = [{"B": b, "S": s} for b, s in rows]
        grid = lambda META: (math.ceil(1000 / META["B"]) * META["S"], (META["B"] << 1) // 2 - 1, 2**META["S"])  # noqa
        e, g = _grid.grid_expressions(grid, metas, names, rows, "k")
        self.assertFalse(any(" if " in x for x in e), e)
        for row, gg in zip(rows, g):
            self.assertEqual([_expr.evaluate(x, dict(zip(names, row))) for x in e], gg)

    def test_decisions_become_a_chain_over_what_the_grid_reads(self):
        names, rows = ["BLOCK", "num_warps"], [(64, 4), (128, 4), (256, 8)]
        metas = [{"BLOCK": r[0]} for r in rows]
        grid = lambda META: (max(1, 200 // META["BLOCK"]), )  # noqa: E731
        e, g = _grid.grid_expressions(grid, metas, names, rows, "k")
        self.assertEqual([x[0] for x in g], [3, 1, 1])
        self.assertIn("BLOCK ==", e[0])
        self.assertNotIn("num_warps", e[0])
        for row, gg in zip(rows, g):
            self.assertEqual(_expr.evaluate(e[0], dict(zip(names, row))), gg[0])

    def test_a_grid_that_is_not_whole_numbers_is_refused(self):
        with self.assertRaises(Refusal):
            _grid.grid_expressions(lambda META: (1000 / META["B"], ), [{"B": 3}], ["B"], [(3, )], "k")
        with self.assertRaises(Refusal):
            _grid.grid_expressions(lambda META: (1, 1, 1, 1), [{"B": 3}], ["B"], [(3, )], "k")


class Spaces(unittest.TestCase):

    def test_configs_and_fixed_constexprs(self):
        args, kwargs = matmul_call(activation="scaled")
        kernel, params, space = space_of(kernels.matmul_kernel, args, kwargs)
        self.assertEqual(space.names, ["BLOCK_SIZE_M", "BLOCK_SIZE_N", "BLOCK_SIZE_K", "GROUP_SIZE_M", "ACTIVATION",
                                       "num_warps", "num_stages"])
        self.assertEqual(len(space.rows), 8)
        self.assertFalse(space.product)
        self.assertEqual(space.rows[0], (128, 256, 64, 8, "scaled", 8, 3))
        self.assertEqual(space.types, ["int", "int", "int", "int", "string", "int", "int"])
        self.assertEqual(space.index({"BLOCK_SIZE_M": 32, "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 32, "GROUP_SIZE_M": 8,
                                      "ACTIVATION": "scaled", "num_warps": 2, "num_stages": 5}), 7)

    def test_defaults_left_to_the_signature(self):
        data = tensor(np.zeros((4, 300)))
        sums = tensor(np.zeros(4))
        args = (data, sums, 300, 300)
        kwargs = {"grid": (4, 3), "warmup": False}
        kernel, params, space = space_of(kernels.rows_kernel, args, kwargs)
        self.assertEqual(space.names, ["BLOCK", "num_warps", "num_stages"])  # EVEN stays at its default
        self.assertEqual(space.rows, [(128, 4, 3), (256, 8, 3)])

    def test_heuristics_are_evaluated_per_config(self):
        x, y = tensor(np.zeros(256)), tensor(np.zeros(256))
        kernel, params, space = space_of(kernels.heuristic_kernel, (x, y, 96), {"grid": (1, ), "warmup": False})
        i = space.names.index("EVEN_K")
        self.assertEqual([r[i] for r in space.rows], [True, False])  # 96 % 32 == 0, 96 % 128 != 0

    def test_expand_widens_each_value_to_its_neighbours(self):
        args, kwargs = matmul_call()
        kernel, params, space = space_of(kernels.matmul_kernel, args, kwargs, expand=True)
        values = dict(zip(space.names, space.values))
        self.assertEqual(values["BLOCK_SIZE_M"], [16, 32, 64, 128, 256])
        self.assertEqual(values["BLOCK_SIZE_K"], [16, 32, 64, 128])
        self.assertEqual(values["GROUP_SIZE_M"], [4, 8, 16])
        self.assertEqual(values["num_stages"], [2, 3, 4, 5, 6])
        self.assertEqual(values["num_warps"], [1, 2, 4, 8, 16])
        self.assertEqual(values["ACTIVATION"], [""])
        self.assertTrue(space.product)
        self.assertEqual(len(space.rows), math.prod(len(v) for v in space.values))
        # the decorator's configs come first, as given
        self.assertEqual(space.rows[0], (128, 256, 64, 8, "", 8, 3))

    def test_prune_configs_by_is_honoured(self):
        def early(configs, named_args, **kwargs):
            return [c for c in configs if c.kwargs["BLOCK_SIZE_M"] >= 128]

        tuner = triton.autotune(configs=kernels.matmul_configs(), key=["M"],
                                prune_configs_by={"early_config_prune": early,
                                                  "perf_model": lambda **kw: kw["BLOCK_SIZE_N"], "top_k": 2})(
                                                      kernels.matmul_kernel.fn)
        args, kwargs = matmul_call()
        tuner.nargs = dict(zip(tuner.arg_names, args))
        kernel, params, space = space_of(tuner, args, kwargs)
        self.assertEqual(sorted(r[1] for r in space.rows), [32, 64])

    def test_mixed_maxnreg_is_refused(self):
        tuner = triton.autotune(configs=[triton.Config({"BLOCK": 64}, maxnreg=128),
                                         triton.Config({"BLOCK": 128})], key=["n"])(kernels.block_pointer_kernel)
        with self.assertRaisesRegex(Refusal, "maxnreg"):
            space_of(tuner, (tensor(np.zeros(8)), tensor(np.zeros(8)), 8), {"grid": (1, ), "warmup": False})

    def test_a_conflict_is_triton_s_error(self):
        tuner = triton.autotune(configs=[triton.Config({"BLOCK": 64}), triton.Config({"BLOCK": 128})],
                                key=["n"])(kernels.block_pointer_kernel)
        with self.assertRaisesRegex(ValueError, "Conflicting meta-parameters: BLOCK"):
            space_of(tuner, (tensor(np.zeros(8)), tensor(np.zeros(8)), 8), {"grid": (1, ), "BLOCK": 32})


class Arguments(unittest.TestCase):

    def test_types(self):
        for dtype, t1 in [("torch.float16", "half"), ("torch.bfloat16", "bfloat16"), ("torch.float32", "float"),
                          ("torch.int8", "int8"), ("torch.float8_e5m2", "float8_e5m2"),
                          ("torch.float8_e4m3fn", "float8_e4m3"), ("fp8e5", "float8_e5m2"), ("bf16", "bfloat16"),
                          (np.dtype("uint16"), "uint16")]:
            self.assertEqual(_arguments.t1_type(dtype, "x"), t1)
        with self.assertRaisesRegex(Refusal, "complex64"):
            _arguments.t1_type("torch.complex64", "x")

    def test_scalars_as_triton_passes_them(self):
        self.assertEqual(_arguments.scalar_entry("n", 7, "n")["Type"], "int32")
        self.assertEqual(_arguments.scalar_entry("n", 2**40, "n")["Type"], "int64")
        self.assertEqual(_arguments.scalar_entry("s", 0.5, "s"), {"Name": "s", "MemoryType": "Scalar", "Type": "float",
                                                                  "FillValue": 0.5})
        self.assertEqual(_arguments.scalar_entry("f", True, "f")["Type"], "bool")
        with self.assertRaisesRegex(Refusal, "None"):
            _arguments.scalar_entry("p", None, "the argument 'p'")

    def test_a_strided_view_keeps_the_memory_it_reaches(self):
        base = np.arange(12, dtype=np.float32).reshape(3, 4)
        t = tensor(base).T  # shape (4, 3), strides (1, 4)
        self.assertEqual(_arguments.span(t), 12)
        self.assertEqual(_arguments.tensor_bytes(t), base.tobytes())
        row = Tensor(storage=tensor(base)._storage, offset=4, shape=(2, ), strides=(2, ), dtype=t.dtype)
        self.assertEqual(_arguments.span(row), 3)
        self.assertEqual(_arguments.tensor_bytes(row), base.reshape(-1)[4:7].tobytes())


class Access(unittest.TestCase):

    def access(self, tuner_or_jit, names):
        fn = tuner_or_jit
        return _kernel.Kernel(type("T", (), {"fn": fn})()).access(names)

    def test_loads_and_stores(self):
        self.assertEqual(self.access(kernels.matmul_kernel.fn, ["a_ptr", "b_ptr", "c_ptr"]),
                         {"a_ptr": "ReadOnly", "b_ptr": "ReadOnly", "c_ptr": "WriteOnly"})
        self.assertEqual(self.access(kernels.rows_kernel.fn, ["data_ptr", "sums_ptr"]),
                         {"data_ptr": "ReadWrite", "sums_ptr": "ReadWrite"})
        self.assertEqual(self.access(kernels.block_pointer_kernel, ["x_ptr", "y_ptr"]),
                         {"x_ptr": "ReadOnly", "y_ptr": "WriteOnly"})

    def test_a_pointer_passed_to_a_helper_may_be_anything(self):
        self.assertEqual(self.access(kernels.helper_kernel, ["x_ptr", "y_ptr"]),
                         {"x_ptr": "ReadOnly", "y_ptr": "ReadWrite"})


class Problems(unittest.TestCase):

    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.dir.cleanup()

    def write(self, tuner, args, kwargs, expand=False):
        kernel, params, space = space_of(tuner, args, kwargs, expand)
        doc, files, grids = _problem.build(kernel, space, params, _problem.key_dims(tuner.keys, params),
                                           list(tuner.reset_to_zero), list(tuner.restore_value), kwargs["grid"])
        return kernel, space, doc, files, grids, _problem.write(self.dir.name, kernel, doc, files)

    def check_with_space(self, problem, space, grids):
        """`tilescope-cli space --json` reads the problem: its count and its launches."""
        exe = os.environ.get("TILESCOPE_CLI")
        if not exe:
            return
        p = subprocess.run([exe, "space", str(problem), "--json", "--sample", "16", "--seed", "0"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        info = json.loads(p.stdout)
        self.assertEqual(info["valid_size"], len(space.rows))
        self.assertIsNone(_problem.launch_mismatch(info, space, grids))

    def test_matmul(self):
        args, kwargs = matmul_call(transposed_b=True)
        kernel, space, doc, files, grids, problem = self.write(kernels.matmul_kernel, args, kwargs)
        spec = doc["KernelSpecification"]
        self.assertEqual(spec["Language"], "Triton")
        self.assertEqual(spec["KernelName"], "matmul_kernel")
        self.assertEqual(spec["KernelFile"], "kernels.py")
        self.assertEqual(spec["GlobalSizeType"], "CUDA")
        self.assertEqual(list(spec["GlobalSize"]), ["X"])
        self.assertEqual([a["Name"] for a in spec["Arguments"]], kernel.runtime)
        a, b, c = spec["Arguments"][:3]
        self.assertEqual((a["Type"], a["AccessType"], a["FillType"], a["Size"]), ("half", "ReadOnly", "BinaryRaw",
                                                                                  512 * 128))
        self.assertEqual((c["AccessType"], "FillType" in c), ("WriteOnly", False))
        self.assertEqual(spec["Arguments"][9], {"Name": "stride_bn", "MemoryType": "Scalar", "Type": "int32",
                                                "FillValue": 128})
        self.assertEqual(doc["Tilescope"]["Shapes"], [{"M": 512, "N": 256, "K": 128}])
        self.assertEqual(doc["Tilescope"]["Configs"], [list(r) for r in space.rows])
        self.assertEqual(doc["Tilescope"]["Partial"], ["c_ptr"])
        folder = os.path.dirname(problem)
        self.assertEqual(sorted(os.listdir(folder)), ["a_ptr.bin", "b_ptr.bin", "kernels.py", "problem.json"])
        with open(os.path.join(folder, "kernels.py"), encoding="utf-8") as f, open(kernel.file, encoding="utf-8") as g:
            self.assertEqual(f.read(), _source.reduce(g.read(), "matmul_kernel", "kernels.py"))
        with open(os.path.join(folder, "b_ptr.bin"), "rb") as f:
            self.assertEqual(f.read(), args[1].numpy().T.tobytes())  # the transposed view's memory
        self.assertEqual(_problem.write(self.dir.name, kernel, doc, files), problem)  # found again
        self.check_with_space(problem, space, grids)

    def test_expanded_matmul(self):
        args, kwargs = matmul_call()
        kernel, space, doc, files, grids, problem = self.write(kernels.matmul_kernel, args, kwargs, expand=True)
        self.assertNotIn("Configs", doc["Tilescope"])
        self.assertEqual(len(grids), len(space.rows))
        self.check_with_space(problem, space, grids)

    def test_reset_to_zero_and_restore_value(self):
        data, sums = tensor(np.ones((4, 300))), tensor(np.full(4, 7.0))
        args, kwargs = (data, sums, 300, 300), {"grid": lambda META: (4, triton.cdiv(300, META["BLOCK"])),
                                                 "warmup": False}
        kernel, space, doc, files, grids, problem = self.write(kernels.rows_kernel, args, kwargs)
        d, s = doc["KernelSpecification"]["Arguments"][:2]
        self.assertEqual((d["AccessType"], d["FillType"]), ("ReadWrite", "BinaryRaw"))
        self.assertEqual((s["AccessType"], s["FillType"], s["FillValue"]), ("ReadWrite", "Constant", 0))
        self.assertEqual(doc["KernelSpecification"]["GlobalSize"], {"X": "4", "Y": "(300 + (BLOCK - 1)) // BLOCK"})
        self.assertEqual(grids, [[4, 3, 1], [4, 2, 1]])
        self.assertEqual(doc["Tilescope"]["Shapes"], [{"n_cols": 300}])
        self.check_with_space(problem, space, grids)


SCRIPT = """import torch
import triton
import triton.language as tl
from helpers import unused

DEVICE = triton.runtime.driver.active.get_active_torch_device()
GROUP = tl.constexpr(8)


def configs():
    return [triton.Config({"BLOCK": b}) for b in (64, 128)]


@triton.jit
def twice(x):
    return x * 2


@triton.autotune(
    configs=configs(),
    key=["n"],
)
@triton.heuristics({"EVEN": lambda args: args["n"] % args["BLOCK"] == 0})
@triton.jit
def kernel(x_ptr, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK * GROUP + tl.arange(0, BLOCK)
    tl.store(x_ptr + offsets, twice(tl.load(x_ptr + offsets)))


x = torch.ones(1000, device=DEVICE)
kernel[(8, )](x, 1000)
if __name__ == "__main__":
    print(x)
"""


class Source(unittest.TestCase):

    def test_the_kernel_file_keeps_what_the_kernel_needs_at_its_lines(self):
        out = _source.reduce(SCRIPT, "kernel", "script.py")
        lines, original = out.split("\n"), SCRIPT.split("\n")
        self.assertEqual(len(lines), len(original))
        kept = [i for i, line in enumerate(lines) if line]
        for i in kept:
            self.assertEqual(lines[i], original[i])
        text = "\n".join(lines[i] for i in kept)
        for wanted in ("import triton\n", "import triton.language as tl", "GROUP = tl.constexpr(8)", "def twice(x):",
                       "@triton.jit\ndef kernel(", "tl.store("):
            self.assertIn(wanted, text)
        for dropped in ("import torch", "helpers", "DEVICE", "def configs", "autotune", "heuristics", "kernel[",
                        "__main__"):
            self.assertNotIn(dropped, text)
        self.assertEqual(lines.index("def kernel(x_ptr, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):"),
                         original.index("def kernel(x_ptr, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):"))

    def test_a_kernel_not_at_the_top_level_is_refused(self):
        with self.assertRaisesRegex(Refusal, "does not define it at its top level"):
            _source.reduce("import triton\nif True:\n    @triton.jit\n    def k(x):\n        pass\n", "k", "s.py")


class Settings(unittest.TestCase):

    def test_environment(self):
        s = _cli.Settings({"TILESCOPE_CLI": "/x/tilescope-cli", "TILESCOPE_TRITON": json.dumps(
            {"backend": "analysis:sm_90", "db": "/d/run.db", "strategy": "bayes", "budget": 20, "space": "expand",
             "tune_args": ["--seed", "3"]})})
        self.assertEqual(s.root, "/d/run.triton")
        self.assertEqual(s.kind, "analysis")
        self.assertTrue(s.expand)
        self.assertEqual(s.tune_command("p.json"), ["p.json", "--backend", "analysis:sm_90", "--db", "/d/run.db",
                                                    "--strategy", "bayes", "--budget", "20", "--seed", "3"])
        self.assertEqual(_cli.Settings({}).tune_command("p.json")[-2:], ["--strategy", "exhaustive"])

    def test_winners_round_trip(self):
        with tempfile.TemporaryDirectory() as d:
            w = _cli.Winners(os.path.join(d, "run.triton"))
            self.assertIsNone(w.get("k"))
            w.put("k", {"config": {"BLOCK": 64}, "session": 3})
            w.put("j", {"config": {"BLOCK": 128}, "session": 4})
            self.assertEqual(_cli.Winners(os.path.join(d, "run.triton")).get("k")["config"], {"BLOCK": 64})
            self.assertNotEqual(_cli.Winners.digest([1, "a"]), _cli.Winners.digest([1, "b"]))


if __name__ == "__main__":
    unittest.main(verbosity=2)
