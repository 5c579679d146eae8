// Loading a config's cubin and checking its launch against the kernel's and the device's limits.

#include "measure/cuda/device/runtimeimpl.h"

#include <algorithm>

namespace tilescope::cuda {

void WorkerRuntime::Impl::load(const worker::Measure& m, const std::vector<char>& cubin, worker::Result& r) {
    check(cu->cuModuleLoadData(&module, cubin.data()), "cannot load the cubin (cuModuleLoadData)");
    check(cu->cuModuleGetFunction(&function, module, m.kernelName.c_str()),
          "no kernel '" + m.kernelName + "' in the cubin (cuModuleGetFunction)");
    fillConstantMemory();
    worker::FunctionInfo info;
    int value = 0;
    check(cu->cuFuncGetAttribute(&value, CU_FUNC_ATTRIBUTE_NUM_REGS, function), "cuFuncGetAttribute(NUM_REGS)");
    info.registers = value;
    check(cu->cuFuncGetAttribute(&value, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, function),
          "cuFuncGetAttribute(LOCAL_SIZE_BYTES)");
    info.localBytes = value;
    check(cu->cuFuncGetAttribute(&value, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, function),
          "cuFuncGetAttribute(SHARED_SIZE_BYTES)");
    info.sharedStatic = value;
    check(cu->cuFuncGetAttribute(&value, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, function),
          "cuFuncGetAttribute(MAX_THREADS_PER_BLOCK)");
    info.maxThreadsPerBlock = value;
    r.function = info;
    StaticInfo s;
    s.registers = info.registers;
    s.stackFrame = info.localBytes;
    s.sharedStatic = info.sharedStatic;
    r.measurement.staticInfo = s;
}

void WorkerRuntime::Impl::fillConstantMemory() {
    const auto& args = arguments();
    for (std::size_t i = 0; i < args.size(); ++i) {
        if (!args[i].constantMemory)
            continue;
        CUdeviceptr symbol = 0;
        std::size_t size = 0;
        check(cu->cuModuleGetGlobal(&symbol, &size, module, args[i].name.c_str()),
              "no __constant__ variable '" + args[i].name + "' in the kernel for " + args[i].label() +
                  " (MemType Constant; cuModuleGetGlobal)");
        const CUdeviceptr source = pristine[i] != 0 ? pristine[i] : buffers[i];
        check(cu->cuMemcpyDtoD(symbol, source, std::min(size, static_cast<std::size_t>(args[i].bytes()))),
              "cannot fill the __constant__ variable '" + args[i].name + "' (cuMemcpyDtoD)");
    }
}

std::string WorkerRuntime::Impl::prepare(const worker::Measure& m, worker::Result& r) {
    worker::FunctionInfo& info = *r.function;
    LaunchGeometry plan = planner->plan(m.config);
    if (!plan.ok())
        return plan.error;
    // A compiler that decides the launch (Triton) gives the block and the shared memory.
    clusterSize = 1;
    if (m.launch) {
        if (m.launch->threadsPerBlock > 0)
            plan.block = {std::int64_t{m.launch->threadsPerBlock}, 1, 1};
        plan.sharedDynamic = m.launch->sharedBytes;
        clusterSize = static_cast<unsigned>(std::max(1, m.launch->clusterSize));
        if (plan.grid[0] % clusterSize != 0)
            return "the grid's X size " + std::to_string(plan.grid[0]) + " is not a multiple of the cluster of " +
                   std::to_string(clusterSize) + " blocks (num_ctas) the kernel was compiled for";
    }
    for (std::size_t i = 0; i < 3; ++i) {
        info.grid[i] = plan.grid[i];
        info.block[i] = plan.block[i];
    }
    info.sharedDynamic = plan.sharedDynamic;

    static const char* const kAxes[] = {"X", "Y", "Z"};
    const std::int64_t threads = plan.threadsPerBlock();
    if (threads > info.maxThreadsPerBlock)
        return "the block of " + std::to_string(threads) + " threads (" + std::to_string(plan.block[0]) + " x " +
               std::to_string(plan.block[1]) + " x " + std::to_string(plan.block[2]) +
               ") exceeds this kernel's limit of " + std::to_string(info.maxThreadsPerBlock) +
               " threads per block (set by its " + std::to_string(info.registers) +
               " registers per thread, __launch_bounds__ or the device)";
    for (std::size_t i = 0; i < 3; ++i) {
        if (plan.block[i] > maxBlock[i])
            return std::string("the block's ") + kAxes[i] + " size " + std::to_string(plan.block[i]) +
                   " exceeds the device's limit of " + std::to_string(maxBlock[i]);
        if (plan.grid[i] > maxGrid[i])
            return std::string("the grid's ") + kAxes[i] + " size " + std::to_string(plan.grid[i]) +
                   " blocks exceeds the device's limit of " + std::to_string(maxGrid[i]);
    }
    const std::int64_t shared = info.sharedStatic + plan.sharedDynamic;
    if (shared > sharedPerBlockOptin)
        return "the block needs " + std::to_string(info.sharedStatic) + " bytes of static and " +
               std::to_string(plan.sharedDynamic) + " bytes of dynamic shared memory, more than the " +
               std::to_string(sharedPerBlockOptin) + " bytes a block can have on this device";
    if (plan.sharedDynamic > 0 && shared > sharedPerBlock) {
        // Past 48 KB a kernel must opt in to dynamic shared memory.
        check(cu->cuFuncSetAttribute(function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                     static_cast<int>(plan.sharedDynamic)),
              "cannot allow " + std::to_string(plan.sharedDynamic) +
                  " bytes of dynamic shared memory (cuFuncSetAttribute)");
    }
    for (std::size_t i = 0; i < 3; ++i) {
        grid[i] = static_cast<unsigned>(plan.grid[i]);
        block[i] = static_cast<unsigned>(plan.block[i]);
    }
    sharedDynamic = static_cast<unsigned>(plan.sharedDynamic);
    placeTrailing(m, plan);
    int blocks = -1;
    if (cu->cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, function, static_cast<int>(threads),
                                                        static_cast<std::size_t>(plan.sharedDynamic)) != CUDA_SUCCESS)
        blocks = -1;
    info.blocksPerSm = blocks;
    return {};
}

namespace {

// `arg`'s value as a scalar of Triton type `type` ("i32", "i64", "u1", "fp32", "fp64", ...), in
// `slot`: true when the type is one of those and differs from the argument's own.
bool asTritonScalar(const std::string& type, const ArgumentSpec& arg, ScalarSlot& slot) {
    static const std::pair<const char*, ElementType> kTypes[] = {
        {"i8", ElementType::Int8},    {"i16", ElementType::Int16},   {"i32", ElementType::Int32},
        {"i64", ElementType::Int64},  {"u8", ElementType::UInt8},    {"u16", ElementType::UInt16},
        {"u32", ElementType::UInt32}, {"u64", ElementType::UInt64},  {"u1", ElementType::Bool},
        {"i1", ElementType::Bool},    {"fp16", ElementType::Half},   {"bf16", ElementType::BFloat16},
        {"fp32", ElementType::Float}, {"fp64", ElementType::Double},
    };
    for (const auto& [name, element] : kTypes) {
        if (type != name)
            continue;
        if (element == arg.element)
            return false;
        ArgumentSpec as = arg;
        as.element = element;
        as.lanes = 1;
        as.count = 1;
        const std::vector<unsigned char> bytes = constantContents(as, arg.scalarValue);
        std::copy(bytes.begin(), bytes.end(), slot.bytes);
        return true;
    }
    return false;
}

} // namespace

void WorkerRuntime::Impl::placeTrailing(const worker::Measure& m, const LaunchGeometry& plan) {
    launchParams.clear();
    trailing.clear();
    if (!m.launch || (m.launch->scratch.empty() && m.launch->argumentTypes.empty()))
        return;
    const std::size_t count = m.launch->scratch.size();
    if (scratch.size() < count) { // grown only: buffers are kept for the next config
        scratch.resize(count, 0);
        scratchBytes.resize(count, 0);
    }
    trailing.assign(count, 0);
    const std::int64_t blocksInGrid = plan.grid[0] * plan.grid[1] * plan.grid[2];
    for (std::size_t k = 0; k < count; ++k) {
        const LaunchMetadata::Scratch& s = m.launch->scratch[k];
        if (s.bytesPerBlock <= 0)
            continue; // a null pointer, as Triton passes for a buffer it does not need
        // cuMemAlloc aligns to 256 bytes at least, more than Triton asks of its scratch.
        const auto bytes =
            static_cast<std::size_t>(s.bytesPerBlock * blocksInGrid * std::max(1, m.launch->clusterSize));
        if (bytes > scratchBytes[k]) {
            freeBuffer(scratch[k]);
            scratchBytes[k] = 0;
            scratch[k] = allocate(static_cast<std::int64_t>(bytes), "the kernel's scratch buffer " + std::to_string(k));
            scratchBytes[k] = bytes;
        }
        trailing[k] = scratch[k];
    }
    // The problem's arguments, less those the compiler made constants of the binary (Triton
    // specialises an integer equal to 1 away), a value in the width and kind the kernel takes it
    // (Triton types a Python number: i32 or i64, fp32), then the trailing ones.
    const std::vector<std::string>& types = m.launch->argumentTypes;
    const auto& args = arguments();
    converted.assign(params.size(), ScalarSlot{});
    for (std::size_t i = 0; i < params.size(); ++i) {
        if (i < types.size() && types[i] == "constexpr")
            continue;
        if (i < types.size() && i < args.size() && !args[i].isVector() && !args[i].isTensorMap() &&
            asTritonScalar(types[i], args[i], converted[i])) {
            launchParams.push_back(converted[i].bytes);
            continue;
        }
        launchParams.push_back(params[i]);
    }
    for (CUdeviceptr& value : trailing)
        launchParams.push_back(&value);
}

void WorkerRuntime::Impl::launchChecked(const worker::Result& r, const std::string& what) {
    const CUresult rc = launch();
    if (rc == CUDA_SUCCESS)
        return;
    std::string why = what;
    if (r.function && r.function->blocksPerSm == 0)
        why += " (not one block fits on an SM: " +
               std::to_string(r.function->block[0] * r.function->block[1] * r.function->block[2]) + " threads of " +
               std::to_string(r.function->registers) + " registers, " +
               std::to_string(r.function->sharedStatic + r.function->sharedDynamic) + " bytes of shared memory)";
    throw CudaFailure{rc, why};
}

} // namespace tilescope::cuda
