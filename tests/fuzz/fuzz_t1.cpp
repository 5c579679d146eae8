// Fuzzes the T1 reader: problem text in; a problem it accepts must write T1 that reads back to
// the same problem.

#include "fuzzing.h"
#include "spec/tuningproblem.h"

using namespace tilescope;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    fuzz::refuseCleanly("T1", [&] {
        const TuningProblem problem = TuningProblem::parse(text, "fuzz.json", {});
        const std::string written = problem.toJson();
        const TuningProblem again = TuningProblem::parse(written, "written.json", {});
        if (again.toJson() != written) {
            std::fprintf(stderr, "T1: a problem read back differs from the one written:\n%s\n", written.c_str());
            std::abort();
        }
    });
    return 0;
}
