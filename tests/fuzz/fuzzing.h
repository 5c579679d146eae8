#pragma once

// What the fuzz harnesses share: each harness is one program that defines
// LLVMFuzzerTestOneInput (libFuzzer's entry point) over one parser of user input. An input may
// be refused with InputError or ExprError (a located message, the expected outcome for most
// inputs); any other exception escaping a parser is a bug, reported as a crash with the input.

#include "base/error.h"
#include "expr/expr.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <typeinfo>

namespace tilescope::fuzz {

/// Runs `parse` on one input; a refusal is fine, anything else aborts with what escaped.
template <typename F>
void refuseCleanly(const char* what, F&& parse) {
    try {
        parse();
    } catch (const InputError&) {
    } catch (const expr::ExprError&) {
    } catch (const std::exception& e) {
        std::fprintf(stderr, "%s: an input escaped as %s: %s\n", what, typeid(e).name(), e.what());
        std::abort();
    }
}

} // namespace tilescope::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);
