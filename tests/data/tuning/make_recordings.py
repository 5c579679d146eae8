#!/usr/bin/env python3
"""Writes the tuning tests' recordings of tiny.json (a scale kernel) at shape 0 (N = 1048576):

  tiny_ktcache.json  a Kernel Tuner cache (schema 1.1.0) as Kernel Tuner writes it, one entry a line
  tiny_t4.json       a T4 results file as Kernel Tuner's store_output_file writes it
  conv_ktcache.json  a Kernel Tuner cache (schema 1.0.0) of a 2D convolution (4096 x 4096 image,
                     15 x 15 filter) with ten tuning parameters, eight of them varying, sampled as a
                     random-sampling strategy leaves a cache: no T1 problem goes with it, as when
                     someone hands over their cache alone

The times are synthetic but plausible for a memory-bound kernel on an H200 (8 MB moved, about
3 TB/s at best), deterministic, with a unique best config. Some configs fail the way they would
for real: static shared memory over 48 KB does not compile, 2048-thread blocks cannot launch, a
few runtime failures; four valid configs are left out of the recordings (replay skips them).

    python3 tests/data/tuning/make_recordings.py
"""
import json
import math
import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))
N = 1048576
PARAMS = {
    "BLOCK": [32, 64, 128, 256, 512, 1024, 2048],
    "ITEMS": [1, 2, 4, 8],
    "NUM_WARPS": [1, 2, 4, 8],
    "NUM_STAGES": [1, 2, 3],
}
ABSENT = {(64, 2, 1, 3), (512, 8, 8, 1), (128, 1, 2, 2), (1024, 4, 4, 1)}


def valid_configs():
    for b in PARAMS["BLOCK"]:
        for i in PARAMS["ITEMS"]:
            for w in PARAMS["NUM_WARPS"]:
                for s in PARAMS["NUM_STAGES"]:
                    if b >= 32 * w and N % (b * i) == 0:
                        yield (b, i, w, s)


def outcome(config, rng):
    b, i, w, s = config
    if b * i * s * 4 > 48 * 1024:
        return "CompilationFailedConfig"
    if b > 1024:
        return "InvalidConfig"
    if (b, i, w, s) in {(32, 8, 1, 1), (256, 1, 8, 3)}:
        return "RuntimeFailedConfig"
    eff = math.exp(-0.08 * math.log2(b / 256) ** 2) * math.exp(-0.1 * math.log2(i / 4) ** 2)
    eff *= (1 - 0.03 * abs(math.log2(w / 4))) * (1 - 0.02 * abs(s - 2))
    eff *= 1 + rng.uniform(-0.01, 0.01)
    return 8 * N / (3.0e12 * eff) * 1e3  # ms


def main():
    rng = random.Random(4)
    stamp = "2026-11-20 10:{:02d}:{:02d}.{:06d}+00:00"
    entries = []
    for n, config in enumerate(valid_configs()):
        if config in ABSENT:
            continue
        t = outcome(config, rng)
        values = dict(zip(PARAMS, config))
        entry = dict(values)
        compile_ms = round(rng.uniform(180, 420), 3)
        if isinstance(t, str):
            entry.update(time=t, compile_time=compile_ms if t != "InvalidConfig" else 0, verification_time=0,
                         benchmark_time=0)
        else:
            runs = [round(t * (1 + rng.uniform(-0.004, 0.004)), 6) for _ in range(3)]
            entry.update(time=round(sum(runs) / 3, 6), times=runs, compile_time=compile_ms, verification_time=0,
                         benchmark_time=round(sum(runs) + rng.uniform(8, 15), 3),
                         **{"GB/s": round(8 * N / (sum(runs) / 3 * 1e-3) / 1e9, 3)})
        entry.update(strategy_time=0, framework_time=round(rng.uniform(0.5, 2), 3),
                     timestamp=stamp.format(n // 60 % 60, n % 60, n * 997 % 1000000))
        entries.append((",".join(str(v) for v in config), entry))

    # The Kernel Tuner cache: its header, then an entry a line, closed as close_cache() closes it.
    header = {"schema_version": "1.1.0", "device_name": "NVIDIA H200", "kernel_name": "scale", "problem_size": [N],
              "tune_params_keys": list(PARAMS), "tune_params": PARAMS, "objective": "time"}
    text = "{\n" + json.dumps(header)[1:-1] + ",\n\"cache\": {"
    text += ",".join("\n" + json.dumps({k: e})[1:-1] for k, e in entries)
    text += "}\n}"
    with open(os.path.join(HERE, "tiny_ktcache.json"), "w") as f:
        f.write(text)

    # T4, as store_output_file() writes it (times in ms, no kernel or shape).
    results = []
    for key, e in entries:
        t = e["time"]
        invalidity = {"CompilationFailedConfig": "compile", "RuntimeFailedConfig": "runtime",
                      "InvalidConfig": "constraints"}.get(t, "correct") if isinstance(t, str) else "correct"
        measurements = []
        if not isinstance(t, str):
            measurements = [{"name": "time", "value": t, "unit": "ms"}, {"name": "GB/s", "value": e["GB/s"], "unit": ""}]
        results.append({
            "timestamp": e["timestamp"],
            "configuration": {p: e[p] for p in PARAMS},
            "times": {"compilation": e["compile_time"], "benchmark": e["benchmark_time"],
                      "framework": e["framework_time"], "search_algorithm": 0, "validation": 0,
                      "runtimes": e.get("times", [])},
            "invalidity": invalidity,
            "correctness": 1,
            "measurements": measurements,
            "objectives": ["time"],
        })
    with open(os.path.join(HERE, "tiny_t4.json"), "w") as f:
        json.dump({"results": results, "schema_version": "1.0.0"}, f)


CONV = {
    "block_size_x": [16 * i for i in range(1, 17)],
    "block_size_y": [1, 2, 4, 8, 16],
    "tile_size_x": [1, 2, 3, 4],
    "tile_size_y": [1, 2, 3, 4],
    "read_only": [0, 1],
    "use_padding": [0, 1],
    "use_shmem": [0, 1],
    "use_cmem": [1],
    "filter_height": [15],
    "filter_width": [15],
}


def conv_time(c, rng):
    """Milliseconds for a config of the convolution on an A100 (best near 0.55 ms), or a failure."""
    bx, by, tx, ty, ro, pad, shm = c[:7]
    threads = bx * by
    if threads > 1024:
        return "InvalidConfig"
    if shm and (bx * tx + 14) * (by * ty + 14) * 4 > 48 * 1024:
        return "CompilationFailedConfig"
    eff = 1 - 0.45 * math.exp(-threads / 96)  # small blocks leave the SMs idle
    eff *= 1 - 0.12 * abs(math.log2(threads / 256)) / 4
    eff *= min(1.0, 0.55 + 0.15 * tx * ty) if tx * ty <= 8 else 1.0 - 0.04 * (tx * ty - 8)  # reuse, then spills
    eff *= 1.0 if shm else (0.62 if ro else 0.34)  # shared memory, else the read-only cache helps
    eff *= 1.03 if pad and shm else 1.0  # padding removes bank conflicts
    eff *= 1 + rng.uniform(-0.015, 0.015)
    return 0.55 / max(eff, 0.02) / 0.93


def write_conv_cache(rng):
    keys = list(CONV)
    everything = [c for c in __import__("itertools").product(*CONV.values()) if c[5] <= c[6]]
    sample = sorted(rng.sample(everything, 900))
    flop = 4096 * 4096 * 15 * 15 * 2
    lines = []
    for n, c in enumerate(sample):
        t = conv_time(c, rng)
        entry = dict(zip(keys, c))
        if isinstance(t, str):
            entry.update(time=t, compile_time=0 if t == "InvalidConfig" else round(rng.uniform(300, 700), 3),
                         verification_time=0, benchmark_time=0)
        else:
            runs = [t * (1 + rng.uniform(-0.003, 0.003)) for _ in range(7)]
            mean = sum(runs) / len(runs)
            entry.update(time=mean, times=runs, compile_time=rng.uniform(300, 700), verification_time=0,
                         benchmark_time=sum(runs) * 1.05, **{"GFLOP/s": flop / (mean * 1e-3) / 1e9})
        entry.update(strategy_time=0, framework_time=rng.uniform(0.7, 3.0),
                     timestamp=f"2023-12-21 {10 + n // 3600:02d}:{n // 60 % 60:02d}:{n % 60:02d}.{n * 7919 % 1000000:06d}+00:00")
        lines.append(json.dumps({",".join(str(v) for v in c): entry})[1:-1])
    # As Kernel Tuner writes a cache: the header's lists one item a line, then an entry a line.
    header = {"schema_version": "1.0.0", "device_name": "NVIDIA A100-PCIE-40GB", "kernel_name": "convolution_kernel",
              "problem_size": [4096, 4096], "tune_params_keys": keys, "tune_params": CONV, "objective": "time"}
    text = json.dumps(header, indent="")[:-2] + ",\n\"cache\": {\n" + ",\n".join(lines) + "}\n}"
    with open(os.path.join(HERE, "conv_ktcache.json"), "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
    write_conv_cache(random.Random(8))
