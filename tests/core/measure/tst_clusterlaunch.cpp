// What travels between the ranks of an MPI job for a Triton kernel (measure/clusterprotocol.h):
// the compile handed to a rank (its language and the call's arguments) and its result sent back
// and on to a slot, with the launch Triton decided (threads, shared memory, cluster, scratch
// buffers, argument types). No MPI here.

#include "measure/clusterprotocol.h"

#include <QtTest>

using namespace tilescope;

namespace {

CompileResult tritonResult() {
    CompileResult r;
    r.status = CompileStatus::Ok;
    r.entryName = "matmul_kernel";
    r.nvrtcVersion = "Triton 3.6.0";
    r.cubin = {'\x7f', 'E', 'L', 'F', '\0', '\1'};
    r.info.registers = 168;
    r.info.spillStores = 8;
    r.log = "ptxas info    : Used 168 registers";
    r.key = std::string(64, 'a');
    LaunchMetadata launch;
    launch.threadsPerBlock = 256;
    launch.sharedBytes = 131072;
    launch.clusterSize = 1;
    launch.scratch = {{0, 1}, {0, 1}};
    launch.argumentTypes = {"*fp16", "*fp16", "*fp16", "i32", "i32", "i32", "i32", "constexpr", "i32", "constexpr"};
    r.launch = launch;
    return r;
}

} // namespace

class TestClusterLaunch : public QObject {
    Q_OBJECT

private slots:
    // A Triton compile handed to a rank is the same request there.
    void compileCarriesTheCall() {
        CompileRequest request;
        request.language = SourceLanguage::Triton;
        request.source = "import triton\n@triton.jit\ndef k(x, n, B: tl.constexpr):\n    pass\n";
        request.sourceName = "k.py";
        request.kernelName = "k";
        request.defines = {{"B", "128"}, {"num_warps", "4"}, {"MODE", "\"fast\""}};
        request.arguments = {R"({"pointer":"fp16"})", "4096"};
        request.arch = "sm_90";
        request.includeDirs = {"/kernels"};
        const cluster::CompileJob back =
            cluster::decodeCompile(cluster::unpack(cluster::pack(cluster::encodeCompile(3, request))));
        QCOMPARE(back.id, std::uint64_t(3));
        QVERIFY(back.request == request);
        // A CUDA compile stays one.
        request.language = SourceLanguage::Cuda;
        request.arguments.clear();
        QVERIFY(cluster::decodeCompile(cluster::unpack(cluster::pack(cluster::encodeCompile(4, request)))).request ==
                request);
    }

    // Its result comes back, and goes on to a slot, with the launch.
    void resultCarriesTheLaunch() {
        const CompileResult r = tritonResult();
        const cluster::Compiled back =
            cluster::decodeCompiled(cluster::unpack(cluster::pack(cluster::encodeCompiled(5, r, true))));
        QVERIFY(back.result.launch.has_value());
        QVERIFY(*back.result.launch == *r.launch);
        QCOMPARE(back.result.nvrtcVersion, r.nvrtcVersion);
        QVERIFY(back.result.cubin == r.cubin);

        auto compiled = std::make_shared<const CompileResult>(r);
        cluster::SlotJob job;
        job.id = 8;
        job.item.index = 17;
        job.item.config = {1, 0, 2};
        job.item.compiles.push_back(ArchCompile{"sm_90", compiled.get()});
        job.compiles.push_back(compiled);
        const cluster::SlotJob slot = cluster::decodeJob(cluster::unpack(cluster::pack(cluster::encodeJob(job))));
        QCOMPARE(slot.compiles.size(), std::size_t(1));
        QVERIFY(slot.compiles[0]->launch.has_value());
        QVERIFY(*slot.compiles[0]->launch == *r.launch);

        // A CUDA binary has none.
        CompileResult cuda = r;
        cuda.launch.reset();
        QVERIFY(!cluster::decodeCompiled(cluster::unpack(cluster::pack(cluster::encodeCompiled(6, cuda, false))))
                     .result.launch);
    }
};

QTEST_GUILESS_MAIN(TestClusterLaunch)
#include "tst_clusterlaunch.moc"
