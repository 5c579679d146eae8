// On a GPU: the offline analysis against the driver for the same cubins. Registers, static shared
// memory and local memory from cuFuncGetAttribute must equal what ptxas reported through NVRTC;
// resident blocks per SM from cuOccupancyMaxActiveBlocksPerMultiprocessor must equal
// theoreticalOccupancy's; the device's limits must equal the arch table's.
//
// libcuda is loaded at run time (dlopen + cuGetProcAddress), as everywhere in Tilescope; the
// few driver API types and constants needed are declared here (values from CUDA 13.0's cuda.h),
// since only core/measure/cuda/ includes cuda.h.

#include "analysis/gpuarch.h"
#include "analysis/occupancy.h"
#include "analysis/staticanalysis.h"
#include "compile/compileservice.h"
#include "compile/requestbuilder.h"
#include "space/configspace.h"
#include "spec/tuningproblem.h"

#include <QtTest>

#include <dlfcn.h>

#include <cstdint>
#include <set>

using namespace tilescope;

namespace {

// ---- the driver API, declared by hand -----------------------------------------------------

using CUresult = int;
using CUdevice = int;
struct CUctx_st;
struct CUmod_st;
struct CUfunc_st;
using CUcontext = CUctx_st*;
using CUmodule = CUmod_st*;
using CUfunction = CUfunc_st*;
constexpr CUresult kCudaSuccess = 0;

enum DeviceAttribute : int {
    kMaxThreadsPerBlock = 1,
    kMaxSharedMemoryPerBlock = 8,
    kMaxRegistersPerBlock = 12,
    kMultiprocessorCount = 16,
    kMaxThreadsPerMultiprocessor = 39,
    kComputeCapabilityMajor = 75,
    kComputeCapabilityMinor = 76,
    kMaxSharedMemoryPerMultiprocessor = 81,
    kMaxRegistersPerMultiprocessor = 82,
    kMaxSharedMemoryPerBlockOptin = 97,
    kMaxBlocksPerMultiprocessor = 106,
    kReservedSharedMemoryPerBlock = 111,
};

enum FunctionAttribute : int {
    kFuncMaxThreadsPerBlock = 0,
    kFuncSharedSizeBytes = 1,
    kFuncLocalSizeBytes = 3,
    kFuncNumRegs = 4,
    kFuncMaxDynamicSharedSizeBytes = 8,
};

struct Driver {
    void* library = nullptr;
    CUresult (*cuInit)(unsigned) = nullptr;
    CUresult (*cuDriverGetVersion)(int*) = nullptr;
    CUresult (*cuDeviceGetCount)(int*) = nullptr;
    CUresult (*cuDeviceGet)(CUdevice*, int) = nullptr;
    CUresult (*cuDeviceGetName)(char*, int, CUdevice) = nullptr;
    CUresult (*cuDeviceGetAttribute)(int*, int, CUdevice) = nullptr;
    CUresult (*cuDevicePrimaryCtxRetain)(CUcontext*, CUdevice) = nullptr;
    CUresult (*cuDevicePrimaryCtxRelease)(CUdevice) = nullptr;
    CUresult (*cuCtxSetCurrent)(CUcontext) = nullptr;
    CUresult (*cuModuleLoadData)(CUmodule*, const void*) = nullptr;
    CUresult (*cuModuleUnload)(CUmodule) = nullptr;
    CUresult (*cuModuleGetFunction)(CUfunction*, CUmodule, const char*) = nullptr;
    CUresult (*cuFuncGetAttribute)(int*, int, CUfunction) = nullptr;
    CUresult (*cuFuncSetAttribute)(CUfunction, int, int) = nullptr;
    CUresult (*cuOccupancyMaxActiveBlocksPerMultiprocessor)(int*, CUfunction, int, std::size_t) = nullptr;
    CUresult (*cuGetErrorName)(CUresult, const char**) = nullptr;
};

using GetProcAddress = CUresult (*)(const char*, void**, int, std::uint64_t, int*);

template <typename F>
bool resolve(GetProcAddress getProc, const char* name, F& function) {
    void* pointer = nullptr;
    int status = 0;
    // 12000: the API versions of CUDA 12.0 (every function used here has had one since).
    if (getProc(name, &pointer, 12000, 0, &status) != kCudaSuccess || !pointer)
        return false;
    function = reinterpret_cast<F>(pointer);
    return true;
}

struct Loaded {
    CUmodule module = nullptr;
    CUfunction function = nullptr;
};

} // namespace

class TestOccupancy : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();
    void cleanupTestCase();
    void archTableMatchesDevice();
    void sgemm();
    void dynamicSharedMemory_data();
    void dynamicSharedMemory();
    void namedBarriers();

private:
    QString errorName(CUresult rc) const;
    Loaded load(const CompileResult& result, const char* kernel);
    void unload(Loaded& loaded);
    // Our prediction vs the driver's for one loaded kernel.
    void compare(const QString& what, const CompileResult& result, CUfunction function, int blockSize,
                 std::int64_t dynamicShared);

    Driver m_cu;
    QString m_skip;
    CUdevice m_device = 0;
    CUcontext m_context = nullptr;
    std::string m_arch;
    const ArchLimits* m_limits = nullptr;
};

QString TestOccupancy::errorName(CUresult rc) const {
    const char* name = nullptr;
    if (m_cu.cuGetErrorName && m_cu.cuGetErrorName(rc, &name) == kCudaSuccess && name)
        return QString::fromLatin1(name);
    return QStringLiteral("CUresult %1").arg(rc);
}

void TestOccupancy::initTestCase() {
    m_cu.library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!m_cu.library) {
        const char* why = dlerror();
        m_skip =
            QStringLiteral("no NVIDIA driver: %1").arg(QString::fromLocal8Bit(why ? why : "libcuda.so.1 not found"));
        QSKIP(qPrintable(m_skip));
    }
    auto getProc = reinterpret_cast<GetProcAddress>(dlsym(m_cu.library, "cuGetProcAddress_v2"));
    if (!getProc) {
        m_skip = QStringLiteral("the driver has no cuGetProcAddress_v2 (older than CUDA 12.5)");
        QSKIP(qPrintable(m_skip));
    }
    const bool ok = resolve(getProc, "cuInit", m_cu.cuInit) &&
                    resolve(getProc, "cuDriverGetVersion", m_cu.cuDriverGetVersion) &&
                    resolve(getProc, "cuDeviceGetCount", m_cu.cuDeviceGetCount) &&
                    resolve(getProc, "cuDeviceGet", m_cu.cuDeviceGet) &&
                    resolve(getProc, "cuDeviceGetName", m_cu.cuDeviceGetName) &&
                    resolve(getProc, "cuDeviceGetAttribute", m_cu.cuDeviceGetAttribute) &&
                    resolve(getProc, "cuDevicePrimaryCtxRetain", m_cu.cuDevicePrimaryCtxRetain) &&
                    resolve(getProc, "cuDevicePrimaryCtxRelease", m_cu.cuDevicePrimaryCtxRelease) &&
                    resolve(getProc, "cuCtxSetCurrent", m_cu.cuCtxSetCurrent) &&
                    resolve(getProc, "cuModuleLoadData", m_cu.cuModuleLoadData) &&
                    resolve(getProc, "cuModuleUnload", m_cu.cuModuleUnload) &&
                    resolve(getProc, "cuModuleGetFunction", m_cu.cuModuleGetFunction) &&
                    resolve(getProc, "cuFuncGetAttribute", m_cu.cuFuncGetAttribute) &&
                    resolve(getProc, "cuFuncSetAttribute", m_cu.cuFuncSetAttribute) &&
                    resolve(getProc, "cuOccupancyMaxActiveBlocksPerMultiprocessor",
                            m_cu.cuOccupancyMaxActiveBlocksPerMultiprocessor) &&
                    resolve(getProc, "cuGetErrorName", m_cu.cuGetErrorName);
    if (!ok) {
        m_skip = QStringLiteral("the driver lacks a function this test needs");
        QSKIP(qPrintable(m_skip));
    }
    if (const CUresult rc = m_cu.cuInit(0); rc != kCudaSuccess) {
        m_skip = QStringLiteral("cuInit failed: %1 (no usable GPU?)").arg(errorName(rc));
        QSKIP(qPrintable(m_skip));
    }
    int count = 0;
    if (m_cu.cuDeviceGetCount(&count) != kCudaSuccess || count == 0) {
        m_skip = QStringLiteral("no CUDA device");
        QSKIP(qPrintable(m_skip));
    }
    QCOMPARE(m_cu.cuDeviceGet(&m_device, 0), kCudaSuccess);
    int major = 0;
    int minor = 0;
    QCOMPARE(m_cu.cuDeviceGetAttribute(&major, kComputeCapabilityMajor, m_device), kCudaSuccess);
    QCOMPARE(m_cu.cuDeviceGetAttribute(&minor, kComputeCapabilityMinor, m_device), kCudaSuccess);
    m_arch = "sm_" + std::to_string(major * 10 + minor);
    char name[256] = {};
    m_cu.cuDeviceGetName(name, sizeof name, m_device);
    int driver = 0;
    m_cu.cuDriverGetVersion(&driver);
    qInfo("device 0: %s (%s), driver API %d", name, m_arch.c_str(), driver);
    m_limits = findArch(m_arch);
    if (!m_limits) {
        m_skip = QStringLiteral("%1 has no entry in the arch table").arg(QString::fromStdString(m_arch));
        QSKIP(qPrintable(m_skip));
    }
    QCOMPARE(m_cu.cuDevicePrimaryCtxRetain(&m_context, m_device), kCudaSuccess);
    QCOMPARE(m_cu.cuCtxSetCurrent(m_context), kCudaSuccess);
}

void TestOccupancy::cleanupTestCase() {
    if (m_context)
        m_cu.cuDevicePrimaryCtxRelease(m_device);
    // libcuda stays loaded: unloading a driver library at exit gains nothing.
}

Loaded TestOccupancy::load(const CompileResult& result, const char* kernel) {
    Loaded loaded;
    const CUresult rc = m_cu.cuModuleLoadData(&loaded.module, result.cubin.data());
    if (rc != kCudaSuccess) {
        qWarning("cuModuleLoadData: %s", qPrintable(errorName(rc)));
        return loaded;
    }
    if (m_cu.cuModuleGetFunction(&loaded.function, loaded.module, kernel) != kCudaSuccess)
        loaded.function = nullptr;
    return loaded;
}

void TestOccupancy::unload(Loaded& loaded) {
    if (loaded.module)
        m_cu.cuModuleUnload(loaded.module);
    loaded = {};
}

void TestOccupancy::compare(const QString& what, const CompileResult& result, CUfunction function, int blockSize,
                            std::int64_t dynamicShared) {
    int registers = -1;
    int sharedStatic = -1;
    int local = -1;
    int maxThreads = -1;
    QCOMPARE(m_cu.cuFuncGetAttribute(&registers, kFuncNumRegs, function), kCudaSuccess);
    QCOMPARE(m_cu.cuFuncGetAttribute(&sharedStatic, kFuncSharedSizeBytes, function), kCudaSuccess);
    QCOMPARE(m_cu.cuFuncGetAttribute(&local, kFuncLocalSizeBytes, function), kCudaSuccess);
    QCOMPARE(m_cu.cuFuncGetAttribute(&maxThreads, kFuncMaxThreadsPerBlock, function), kCudaSuccess);
    if (dynamicShared > m_limits->sharedPerBlock - sharedStatic) {
        // What the worker does before such a launch, and what the model assumes.
        QCOMPARE(m_cu.cuFuncSetAttribute(function, kFuncMaxDynamicSharedSizeBytes, static_cast<int>(dynamicShared)),
                 kCudaSuccess);
    }
    int blocks = -1;
    QCOMPARE(m_cu.cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, function, blockSize,
                                                              static_cast<std::size_t>(dynamicShared)),
             kCudaSuccess);

    KernelResources kernel;
    kernel.registers = result.info.registers;
    kernel.sharedStatic = result.info.sharedStatic;
    kernel.sharedDynamic = dynamicShared;
    kernel.barriers = result.info.barriers;
    kernel.blockSize = blockSize;
    const Occupancy predicted = theoreticalOccupancy(*m_limits, kernel);
    qInfo("%s: registers %d/%d, smem %d/%lld, local %d/%lld, blocks/SM driver %d, predicted %d (%s, %.1f %%)",
          qPrintable(what), registers, result.info.registers, sharedStatic,
          static_cast<long long>(result.info.sharedStatic), local, static_cast<long long>(result.info.stackFrame),
          blocks, predicted.activeBlocks, limiterName(predicted.limiter).data(), predicted.percent());
    QCOMPARE(registers, result.info.registers);
    QCOMPARE(static_cast<std::int64_t>(sharedStatic), result.info.sharedStatic);
    QCOMPARE(static_cast<std::int64_t>(local), result.info.stackFrame);
    QVERIFY(maxThreads >= blockSize);
    QCOMPARE(predicted.activeBlocks, blocks);
}

void TestOccupancy::archTableMatchesDevice() {
    if (!m_skip.isEmpty())
        QSKIP(qPrintable(m_skip));
    auto attribute = [&](int which) {
        int value = -1;
        m_cu.cuDeviceGetAttribute(&value, which, m_device);
        return value;
    };
    QCOMPARE(attribute(kMaxThreadsPerBlock), m_limits->maxThreadsPerBlock);
    QCOMPARE(attribute(kMaxThreadsPerMultiprocessor), m_limits->maxWarpsPerSm * m_limits->warpSize);
    QCOMPARE(attribute(kMaxBlocksPerMultiprocessor), m_limits->maxBlocksPerSm);
    QCOMPARE(attribute(kMaxRegistersPerMultiprocessor), m_limits->registersPerSm);
    QCOMPARE(attribute(kMaxRegistersPerBlock), m_limits->registersPerBlock);
    QCOMPARE(static_cast<std::int64_t>(attribute(kMaxSharedMemoryPerBlock)), m_limits->sharedPerBlock);
    QCOMPARE(static_cast<std::int64_t>(attribute(kMaxSharedMemoryPerMultiprocessor)), m_limits->sharedPerSm);
    QCOMPARE(static_cast<std::int64_t>(attribute(kMaxSharedMemoryPerBlockOptin)), m_limits->sharedPerBlockOptIn);
    QCOMPARE(static_cast<std::int64_t>(attribute(kReservedSharedMemoryPerBlock)), m_limits->reservedSharedPerBlock);
    qInfo("%s: %d SMs", m_arch.c_str(), attribute(kMultiprocessorCount));
}

void TestOccupancy::sgemm() {
    if (!m_skip.isEmpty())
        QSKIP(qPrintable(m_skip));
    // A spread of sgemm configs (block sizes 32 to 1024, 32 to 255 registers, spilling or not),
    // compiled for this device's arch by the same path the analysis takes.
    const TuningProblem problem = TuningProblem::load(TILESCOPE_SOURCE_DIR "/kernels/sgemm/sgemm.json");
    const ConfigSpace space = ConfigSpace::build(problem, 0);
    const StaticAnalyzer analyzer(problem, 0);
    const std::vector<std::uint64_t> indices = space.sample(48, 11);
    std::vector<CompileRequest> requests;
    for (std::uint64_t index : indices)
        requests.push_back(analyzer.requests().request(space.at(index), m_arch));
    CompileService service({0, nullptr});
    const std::vector<CompileResult> results = service.compileAll(requests);

    std::set<Limiter> limiters;
    int spilling = 0;
    for (std::size_t i = 0; i < indices.size(); ++i) {
        QVERIFY2(results[i].ok(), results[i].message.c_str());
        const Config config = space.at(indices[i]);
        const LaunchGeometry geometry = analyzer.geometry(config);
        Loaded loaded = load(results[i], "sgemm");
        QVERIFY(loaded.function);
        compare(QString::fromStdString(space.describe(config)), results[i], loaded.function,
                static_cast<int>(geometry.threadsPerBlock()), geometry.sharedDynamic);
        const ConfigAnalysis analysis = analyzer.analyze(indices[i], config, m_arch, results[i]);
        limiters.insert(analysis.occupancy.limiter);
        spilling += analysis.spills() ? 1 : 0;
        unload(loaded);
    }
    qInfo("%zu configs: %d spilling, %zu distinct limiters", indices.size(), spilling, limiters.size());
}

void TestOccupancy::dynamicSharedMemory_data() {
    QTest::addColumn<int>("blockSize");
    QTest::addColumn<qint64>("dynamicShared");
    for (int block : {64, 256, 1024}) {
        for (qint64 kb : {0, 16, 47, 64, 100, 150, 200, 227}) {
            QTest::addRow("%d threads, %lld KB", block, kb) << block << kb * 1024;
        }
    }
}

void TestOccupancy::dynamicSharedMemory() {
    if (!m_skip.isEmpty())
        QSKIP(qPrintable(m_skip));
    QFETCH(int, blockSize);
    QFETCH(qint64, dynamicShared);
    if (dynamicShared > m_limits->sharedPerBlockOptIn)
        QSKIP("more than a block may have on this arch");
    CompileRequest request;
    request.source = "extern \"C\" __global__ void k(float* p) {\n"
                     "    extern __shared__ float s[];\n"
                     "    s[threadIdx.x] = p[threadIdx.x];\n"
                     "    __syncthreads();\n"
                     "    p[threadIdx.x] = s[(threadIdx.x + 1) % blockDim.x];\n"
                     "}\n";
    request.sourceName = "dynamic.cu";
    request.kernelName = "k";
    request.arch = m_arch;
    const CompileResult result = compileKernel(request);
    QVERIFY2(result.ok(), result.message.c_str());
    Loaded loaded = load(result, "k");
    QVERIFY(loaded.function);
    compare(QStringLiteral("dynamic %1 B, %2 threads").arg(dynamicShared).arg(blockSize), result, loaded.function,
            blockSize, dynamicShared);
    unload(loaded);
}

void TestOccupancy::namedBarriers() {
    if (!m_skip.isEmpty())
        QSKIP(qPrintable(m_skip));
    // Barrier 15 makes ptxas report 16 barriers; from sm_90 on the calculator bounds resident
    // blocks by them (4 one-warp blocks on sm_90).
    CompileRequest request;
    request.source = "extern \"C\" __global__ void k(float* p) {\n"
                     "    p[threadIdx.x] += 1.0f;\n"
                     "    asm volatile(\"bar.sync 15, 32;\" ::: \"memory\");\n"
                     "    p[threadIdx.x] *= 2.0f;\n"
                     "}\n";
    request.sourceName = "barriers.cu";
    request.kernelName = "k";
    request.arch = m_arch;
    const CompileResult result = compileKernel(request);
    QVERIFY2(result.ok(), result.message.c_str());
    qInfo("ptxas: %d barriers", result.info.barriers);
    Loaded loaded = load(result, "k");
    QVERIFY(loaded.function);
    compare(QStringLiteral("16 named barriers, 32 threads"), result, loaded.function, 32, 0);
    unload(loaded);
}

QTEST_GUILESS_MAIN(TestOccupancy)
#include "tst_occupancy.moc"
