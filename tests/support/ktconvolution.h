#pragma once

// Kernel Tuner's convolution of the T1 corpus (tests/data/t1corpus/kt_convolution.json) with its
// GlobalSize as blocks, `factor` times its grid in each dimension: the problem whose GlobalSize
// disagrees with the grid Kernel Tuner launches, for the launch-warning tests.

#include <nlohmann/json.hpp>

#include <QString>

#include <fstream>
#include <string>

/// Writes the problem to `path` (its KernelFile made absolute) and returns `path`.
inline QString writeConvolutionWithGlobalSize(const QString& path, int factor) {
    std::ifstream in(TILESCOPE_TEST_DATA "/t1corpus/kt_convolution.json");
    nlohmann::ordered_json t1 = nlohmann::ordered_json::parse(in);
    auto& ks = t1["KernelSpecification"];
    ks["KernelFile"] = TILESCOPE_TEST_DATA "/t1corpus/kt_convolution.cu";
    ks["GlobalSizeType"] = "CUDA";
    const std::string times = factor == 1 ? std::string() : std::to_string(factor) + " * ";
    ks["GlobalSize"] = {{"X", times + "((ProblemSize[0] + block_size_x - 1) // block_size_x)"},
                        {"Y", times + "((ProblemSize[1] + block_size_y - 1) // block_size_y)"},
                        {"Z", "1"}};
    std::ofstream(path.toStdString()) << t1.dump(1);
    return path;
}
