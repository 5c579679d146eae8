// Verification: the problem's reference outputs, and each config's outputs compared with them
// (or with the first correct config's) after a launch on poisoned buffers.

#include "measure/cuda/device/runtimeimpl.h"

#include <algorithm>
#include <limits>

namespace tilescope::cuda {

void WorkerRuntime::Impl::readReferences(const std::filesystem::path& baseDir, const std::string& problemFile) {
    const auto& args = arguments();
    hasT1Reference.assign(args.size(), false);
    for (std::size_t k = 0; k < problem->referenceArguments.size(); ++k) {
        const ReferenceArgument& r = problem->referenceArguments[k];
        const std::string ptr = "/KernelSpecification/ReferenceArguments/" + std::to_string(k);
        const auto target =
            std::find_if(args.begin(), args.end(), [&](const ArgumentSpec& a) { return a.name == r.targetName; });
        if (target == args.end())
            throw InputError(problemFile, ptr + "/TargetName",
                             "TargetName '" + r.targetName + "' is not the name of an argument");
        if (!target->isVector())
            throw InputError(problemFile, ptr + "/TargetName",
                             "TargetName '" + r.targetName +
                                 "' is a Scalar argument; only Vector arguments hold output to compare");
        const std::optional<Validation> method = parseValidation(r.validationMethod);
        if (!method)
            throw InputError(problemFile, ptr + "/ValidationMethod",
                             "unknown ValidationMethod '" + r.validationMethod + "'");
        Reference ref;
        ref.argument = target->index;
        ref.method = *method;
        ref.tolerance = r.validationThreshold.value_or(defaultTolerance(target->element));
        const std::string who = "reference '" + r.name + "' of " + target->label();
        if (r.fillType == "Constant") {
            if (!r.fillValue)
                throw InputError(problemFile, ptr, who + ": FillType Constant needs a FillValue");
            if (const std::string why = valueFits(target->element, *r.fillValue); !why.empty())
                throw InputError(problemFile, ptr + "/FillValue", who + ": FillValue is " + why);
            ref.data = constantContents(*target, *r.fillValue);
        } else if (r.fillType == "BinaryRaw") {
            if (r.dataSource.empty())
                throw InputError(problemFile, ptr, who + ": FillType BinaryRaw needs a DataSource");
            const std::filesystem::path source(r.dataSource);
            const std::filesystem::path file = source.is_absolute() || baseDir.empty() ? source : baseDir / source;
            ref.data = readRawFile(file, target->bytes(), problemFile, ptr + "/DataSource", who);
        } else {
            throw InputError(problemFile, ptr + "/FillType",
                             who + ": FillType '" + r.fillType +
                                 "' cannot give a reference output (use Constant or BinaryRaw)");
        }
        hasT1Reference[ref.argument] = true;
        references.push_back(std::move(ref));
    }
}

void WorkerRuntime::Impl::verify(const worker::Measure& m, worker::Result& r) {
    Measurement& out = r.measurement;
    const auto& args = arguments();
    check(restoreReadWrite(), "cannot restore the ReadWrite arguments (cuMemcpyDtoDAsync)");
    for (std::size_t i = 0; i < args.size(); ++i) {
        // A ReadWrite buffer is also an input: it keeps its initial contents.
        if (args[i].isVector() && args[i].access == Access::WriteOnly)
            check(cu->cuMemsetD8Async(buffers[i], kPoison, static_cast<std::size_t>(args[i].bytes()), stream),
                  "cannot poison " + args[i].label() + " (cuMemsetD8Async)");
    }
    launchChecked(r, "the launch failed");
    check(cu->cuStreamSynchronize(stream), "the kernel failed");

    std::vector<bool> download(args.size(), false);
    for (std::size_t i = 0; i < args.size(); ++i)
        download[i] = args[i].verify || hasT1Reference[i];
    for (std::size_t i = 0; i < args.size(); ++i) {
        if (!download[i])
            continue;
        if (host[i].size() != static_cast<std::size_t>(args[i].bytes())) {
            host[i].resize(static_cast<std::size_t>(args[i].bytes()));
            // Page-locked, a download of a large output (256 MB for a softmax of 8192 x 8192)
            // runs at the link's speed instead of through the driver's staging buffers. Where it
            // cannot be locked the copy is slower, not wrong.
            if (host[i].size() >= (std::size_t{1} << 20) &&
                cu->cuMemHostRegister(host[i].data(), host[i].size(), 0) == CUDA_SUCCESS)
                pinned.push_back(host[i].data());
        }
        check(cu->cuMemcpyDtoH(host[i].data(), buffers[i], host[i].size()),
              "cannot copy " + args[i].label() + " to the host (cuMemcpyDtoH)");
    }

    bool failed = false;
    bool compared = false;
    bool unverified = false;
    double worst = 0;
    std::string message;
    auto take = [&](const Verdict& v) {
        compared = true;
        worst = std::max(worst, v.error);
        if (!v.ok && !failed) {
            failed = true;
            message = v.message;
        }
    };
    for (const Reference& ref : references)
        take(compareValues(args[ref.argument], host[ref.argument], ref.data, ref.method, ref.tolerance));
    for (std::size_t i = 0; i < args.size(); ++i) {
        if (!args[i].verify || hasT1Reference[i])
            continue;
        if (m.makeReference) {
            // A reference with holes would fail every later config: the candidate must write everything.
            if (const std::int64_t at = firstPoisoned(args[i], host[i]); at >= 0) {
                Verdict v;
                v.ok = false;
                v.error = std::numeric_limits<double>::infinity();
                v.message = args[i].label() + ": element " + std::to_string(at) +
                            " was never written (still the NaN poison), so this output cannot be the reference";
                take(v);
            }
        } else if (hasKept) {
            take(compareValues(args[i], host[i], kept[i], Validation::Normalized, defaultTolerance(args[i].element)));
        } else {
            unverified = true;
        }
    }

    if (failed) {
        out.status = ResultStatus::WrongResult;
        out.message = message;
        out.verificationError = worst;
        return;
    }
    if (m.makeReference) {
        for (std::size_t i = 0; i < args.size(); ++i) {
            if (args[i].verify && !hasT1Reference[i])
                kept[i] = host[i]; // a copy: the scratch stays page-locked
        }
        hasKept = true;
        out.verificationError = worst;
        return;
    }
    if (compared)
        out.verificationError = worst;
    if (unverified)
        out.message = compared ? "partly verified: outputs without a ReferenceArguments entry have no reference yet"
                               : "not verified: no reference yet";
    else if (!compared)
        out.message = "not verified: the kernel has no output arguments";
}

void WorkerRuntime::Impl::returnContents(const worker::Measure& m, worker::Result& r) {
    const auto& args = arguments();
    for (std::size_t i : m.returnArguments) {
        if (i >= args.size() || !args[i].isVector() || buffers[i] == 0)
            continue;
        worker::ArgumentContents c;
        c.argument = i;
        c.bytes.resize(static_cast<std::size_t>(args[i].bytes()));
        check(cu->cuMemcpyDtoH(c.bytes.data(), buffers[i], c.bytes.size()),
              "cannot copy " + args[i].label() + " to the host (cuMemcpyDtoH)");
        r.outputs.push_back(std::move(c));
    }
}

} // namespace tilescope::cuda
