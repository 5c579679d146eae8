// Verification: the problem's reference outputs, and each config's outputs compared with them
// (or with the first correct config's) after a launch on poisoned buffers.

#include "measure/cuda/device/runtimeimpl.h"

#include "base/textformat.h"

#include <algorithm>
#include <limits>
#include <optional>

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
            check(cu->cuMemsetD8Async(buffers[i], kCanary, static_cast<std::size_t>(args[i].bytes()), stream),
                  "cannot fill " + args[i].label() + " with the canary (cuMemsetD8Async)");
    }
    launchChecked(r, "the launch failed");
    check(cu->cuStreamSynchronize(stream), "the kernel failed");

    // The reference of the config's group, unless this config is to become it.
    const auto group = kept.find(m.referenceGroup);
    const KeptReference* ref = m.makeReference || group == kept.end() ? nullptr : &group->second;
    auto canaried = [&](std::size_t i) { return args[i].access == Access::WriteOnly; };

    // Outputs the GPU compares with its copy of the reference: settled there when every element
    // agrees; otherwise copied here, where the comparison finds and names what does not. Without
    // verification the copy still answers the check of what the config wrote: an output that
    // agrees with the reference's wrote what it wrote, and is as finite.
    std::vector<std::optional<Verdict>> settled(args.size());
    if (ref && !ref->onDevice.empty() && (!m.verify || ref->hasValues))
        for (std::size_t i = 0; i < args.size(); ++i)
            if (args[i].verify && !(m.verify && hasT1Reference[i]))
                settled[i] = compareOnDevice(i, ref->onDevice[i]);

    std::vector<bool> download(args.size(), false);
    for (std::size_t i = 0; i < args.size(); ++i) {
        download[i] = (args[i].verify && !settled[i]) || (m.verify && hasT1Reference[i]);
        out.parts.comparedOnDevice += settled[i] ? 1 : 0;
        out.parts.downloaded += download[i] ? 1 : 0;
    }
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

    // Which elements each checked output holds as the launch wrote them: against the reference,
    // one pass over the output; an element that still holds the canary is confirmed by a second
    // launch before it counts as never written. A reference keeps whole masks.
    std::vector<ElementMask> written(args.size());
    std::vector<OutputScan> scans(args.size());
    std::vector<std::optional<Verdict>> compares(args.size()); // the comparison that did the check too
    std::vector<std::size_t> toConfirm;
    for (std::size_t i = 0; i < args.size(); ++i) {
        if (!args[i].verify)
            continue;
        const bool confirmable = canaried(i) && !args[i].partial;
        if (m.makeReference) {
            written[i] =
                canaried(i) ? writtenOver(args[i], host[i], kCanary) : changedFrom(args[i], host[i], initial[i]);
            if (confirmable && written[i].count() < args[i].values())
                toConfirm.push_back(i);
            continue;
        }
        if (!ref)
            continue;
        if (settled[i]) { // every element written, finite and within the tolerance
            compares[i] = *settled[i];
            continue;
        }
        const std::span<const unsigned char> before =
            canaried(i) ? std::span<const unsigned char>() : std::span<const unsigned char>(initial[i]);
        if (m.verify && ref->hasValues && !hasT1Reference[i]) {
            // Verifying: the comparison with the reference's values finds the elements never
            // written in the same pass (an output equal to the reference's costs nothing more).
            const WriteCheck check{canaried(i), kCanary, before};
            const Verdict& v = compares[i].emplace(compareValues(
                args[i], host[i], ref->values[i], Validation::Normalized, defaultTolerance(args[i].element), &check));
            scans[i].unwritten = v.unwritten;
            scans[i].extra = v.extra;
            scans[i].nonFinite.count = v.nonFinite.count;
            scans[i].nonFinite.first = v.nonFinite.first;
            if (v.nonFinite.first >= 0)
                scans[i].nonFinite.firstValue =
                    decodeValue(args[i].element, host[i].data() + static_cast<std::size_t>(v.nonFinite.first) *
                                                                      elementSize(args[i].element));
        } else {
            scans[i] = scanOutput(args[i], host[i], kCanary, before, ref->written[i], ref->finite[i]);
        }
        // Unverified, a ReadWrite output whose elements keep their initial contents may have been
        // written with those very values (a sum per block that is 0 over a buffer of zeros): a
        // second launch over other initial contents tells.
        const bool confirmableReadWrite = !canaried(i) && !args[i].partial && !m.verify && !initial[i].empty();
        if ((confirmable || confirmableReadWrite) && scans[i].unwritten.count > 0) {
            written[i] =
                canaried(i) ? writtenOver(args[i], host[i], kCanary) : changedFrom(args[i], host[i], initial[i]);
            toConfirm.push_back(i);
        }
    }
    if (!toConfirm.empty())
        confirmUnwritten(toConfirm, r, written);
    for (const std::size_t i : toConfirm) {
        if (!ref)
            continue;
        scans[i].unwritten = missingFrom(ref->written[i], written[i]);
        scans[i].lastWritten = lastSetIn(written[i]);
    }

    bool failed = false;
    std::string shorter; // outputs that end early, for the message
    bool compared = false;
    bool unverified = false;
    double worst = 0;
    std::string message;
    std::int64_t unwritten = 0, nonFinite = 0, mismatched = 0, extra = 0;
    auto fail = [&](const std::string& why) {
        if (!failed) {
            failed = true;
            message = why;
        }
    };
    for (std::size_t i = 0; i < args.size(); ++i) {
        if (!args[i].verify)
            continue;
        if (m.makeReference) {
            // A reference with holes would fail every later config: the candidate must write everything.
            if (canaried(i) && !args[i].partial) {
                if (const ElementGap gap = unsetIn(written[i]); gap.count > 0) {
                    unwritten += gap.count;
                    const std::string name = args[i].name.empty() ? "NAME" : args[i].name;
                    fail(unwrittenMessage(args[i], gap, true) +
                         ", so this output cannot be the reference; a kernel that writes only part of it by design "
                         "says so in the problem: \"Tilescope\": {\"Partial\": [\"" +
                         name + "\"]}");
                }
            }
            continue;
        }
        if (!ref)
            continue;
        const OutputScan& scan = scans[i];
        // Unverified, an output that ends before the reference's with one element per block of
        // this launch (a sum per block in a buffer sized for the most blocks) is no error; holes
        // in it, or a tail left by a grid too small, are.
        const bool endsEarly =
            !m.verify && scan.endsEarly(std::int64_t{grid[0]} * std::int64_t{grid[1]} * std::int64_t{grid[2]});
        if (!args[i].partial && scan.unwritten.count > 0 && !endsEarly) {
            unwritten += scan.unwritten.count;
            fail(unwrittenMessage(args[i], scan.unwritten, canaried(i)));
        } else if (!args[i].partial && endsEarly) {
            shorter += "; " + args[i].label() + " ends " + formatCount(static_cast<double>(scan.unwritten.count)) +
                       " elements before the reference config's (a result per block of its grid, not checked past "
                       "its end)";
        }
        if (canaried(i))
            extra += scan.extra;
        if (scan.nonFinite.count > 0) {
            nonFinite += scan.nonFinite.count;
            fail(nonFiniteMessage(args[i], scan.nonFinite, true));
        }
    }

    auto take = [&](std::size_t i, const Verdict& v) {
        compared = true;
        worst = std::max(worst, v.error);
        mismatched += v.mismatched;
        if (v.ok)
            return;
        std::string why = v.message;
        // Where a ReadWrite output differs, the elements this config changed that the reference
        // config left as they were say which of the two may be wrong.
        if (ref && !canaried(i) && args[i].verify && !initial[i].empty()) {
            ElementMask changed = changedBeyond(args[i], host[i], initial[i], defaultTolerance(args[i].element));
            const std::int64_t more = missingFrom(changed, ref->written[i]).count;
            if (more > 0) {
                extra += more;
                why += "; it changes " + formatCount(static_cast<double>(more)) +
                       " elements that the reference "
                       "config left as they were: the reference config may be the one that is wrong";
            }
        }
        fail(why);
    };
    if (m.verify) {
        for (const Reference& t : references)
            take(t.argument, compareValues(args[t.argument], host[t.argument], t.data, t.method, t.tolerance));
        for (std::size_t i = 0; i < args.size(); ++i) {
            if (!args[i].verify || hasT1Reference[i] || m.makeReference)
                continue;
            if (compares[i])
                take(i, *compares[i]);
            else if (ref && ref->hasValues)
                take(i, compareValues(args[i], host[i], ref->values[i], Validation::Normalized,
                                      defaultTolerance(args[i].element)));
            else
                unverified = true;
        }
    }

    for (const auto& [name, value] : {std::pair{kVerifyUnwritten, unwritten}, std::pair{kVerifyNonFinite, nonFinite},
                                      std::pair{kVerifyMismatched, mismatched}, std::pair{kVerifyExtra, extra}}) {
        if (value > 0)
            out.metrics.push_back({name, static_cast<double>(value)});
    }
    if (failed) {
        out.status = ResultStatus::WrongResult;
        out.message = message;
        out.verificationError = unwritten > 0 || nonFinite > 0 ? std::numeric_limits<double>::infinity() : worst;
        return;
    }
    if (m.makeReference) {
        KeptReference k;
        k.written.resize(args.size());
        k.finite.resize(args.size());
        k.values.resize(args.size());
        k.onDevice.resize(args.size());
        if (const auto old = kept.find(m.referenceGroup); old != kept.end()) {
            for (DeviceCopy& c : old->second.onDevice)
                releaseCopy(c);
            kept.erase(old);
        }
        for (std::size_t i = 0; i < args.size(); ++i) {
            if (!args[i].verify)
                continue;
            k.finite[i] = finiteValues(args[i], host[i]);
            k.written[i] = std::move(written[i]);
            if (m.verify && hasT1Reference[i])
                continue; // compared with the problem's own reference, on the host
            if (m.verify)
                k.values[i] = host[i]; // a copy: the scratch stays page-locked
            // The output's buffer still holds what was downloaded, unless a second launch
            // confirmed its unwritten elements: then only the host keeps the reference.
            const bool relaunched = std::find(toConfirm.begin(), toConfirm.end(), i) != toConfirm.end();
            if (!relaunched)
                k.onDevice[i] = keepOnDevice(i, host[i], k.written[i], k.finite[i]);
        }
        k.hasValues = m.verify;
        kept[m.referenceGroup] = std::move(k);
        if (m.verify)
            out.verificationError = worst;
        if (!m.verify)
            out.message = "not verified: verification is off";
        return;
    }
    if (compared)
        out.verificationError = worst;
    if (!m.verify)
        out.message = "not verified: verification is off" + shorter;
    else if (unverified)
        out.message = compared ? "partly verified: outputs without a ReferenceArguments entry have no reference yet"
                               : "not verified: no reference yet";
    else if (!compared)
        out.message = "not verified: the kernel has no output arguments";
}

void WorkerRuntime::Impl::confirmUnwritten(const std::vector<std::size_t>& which, const worker::Result& r,
                                           std::vector<ElementMask>& written) {
    const auto& args = arguments();
    check(restoreReadWrite(), "cannot restore the ReadWrite arguments (cuMemcpyDtoDAsync)");
    for (std::size_t i = 0; i < args.size(); ++i) {
        if (args[i].isVector() && args[i].access == Access::WriteOnly)
            check(cu->cuMemsetD8Async(buffers[i], kSecondCanary, static_cast<std::size_t>(args[i].bytes()), stream),
                  "cannot fill " + args[i].label() + " with the canary (cuMemsetD8Async)");
    }
    // A ReadWrite output starts from its initial contents with the lowest bit of each element
    // flipped: as input nearly the same, and an element the kernel writes with its initial value
    // now differs from where it started. (Only outputs the reference config changed come here,
    // never a buffer of indices the kernel only reads.)
    std::vector<std::vector<unsigned char>> nudged(args.size());
    check(cu->cuStreamSynchronize(stream), "cannot restore the ReadWrite arguments"); // before the copies below
    for (const std::size_t i : which) {
        if (args[i].access == Access::WriteOnly)
            continue;
        nudged[i] = initial[i];
        const std::size_t size = elementSize(args[i].element);
        for (std::size_t at = 0; at < nudged[i].size(); at += size)
            nudged[i][at] ^= 1u; // the least significant byte: elements are little-endian
        check(cu->cuMemcpyHtoD(buffers[i], nudged[i].data(), nudged[i].size()),
              "cannot fill " + args[i].label() + " (cuMemcpyHtoD)");
    }
    launchChecked(r, "the launch failed");
    check(cu->cuStreamSynchronize(stream), "the kernel failed");
    std::vector<unsigned char> second;
    for (const std::size_t i : which) {
        second.resize(static_cast<std::size_t>(args[i].bytes()));
        check(cu->cuMemcpyDtoH(second.data(), buffers[i], second.size()),
              "cannot copy " + args[i].label() + " to the host (cuMemcpyDtoH)");
        written[i].unite(args[i].access == Access::WriteOnly ? writtenOver(args[i], second, kSecondCanary)
                                                             : changedFrom(args[i], second, nudged[i]));
    }
    // What is returned and timed next starts from the initial contents again: once more as the
    // first launch ran.
    if (std::any_of(nudged.begin(), nudged.end(), [](const auto& n) { return !n.empty(); })) {
        check(restoreReadWrite(), "cannot restore the ReadWrite arguments (cuMemcpyDtoDAsync)");
        launchChecked(r, "the launch failed");
        check(cu->cuStreamSynchronize(stream), "the kernel failed");
    }
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
