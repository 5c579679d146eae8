#pragma once

// For the suites that compile Triton kernels: Triton is there when the Python Tilescope runs its
// helpers with ($TILESCOPE_PYTHON, else python3) imports triton. Without it a test that needs it
// reports a skip with the reason, except where TILESCOPE_REQUIRE_TRITON is set (the `ci` test
// preset sets it, with TILESCOPE_PYTHON naming the virtual environment the README's test command
// makes) or under CI with TILESCOPE_PYTHON set, where a skip would hide that the test never ran.

#include "compile/triton.h"
#include "testprograms.h"

#include <QByteArray>
#include <QtTest>

#define TILESCOPE_NEED_TRITON()                                                                                        \
    do {                                                                                                               \
        const tilescope::TritonSetup& setup_ = tilescope::tritonSetup();                                               \
        if (!setup_.ok) {                                                                                              \
            const QByteArray message_ =                                                                                \
                QByteArrayLiteral("no Triton to compile with: ") + QByteArray::fromStdString(setup_.error);            \
            if (qEnvironmentVariableIsSet("TILESCOPE_REQUIRE_TRITON") ||                                               \
                (underCi() && qEnvironmentVariableIsSet("TILESCOPE_PYTHON")))                                          \
                QFAIL(message_.constData());                                                                           \
            QSKIP(message_.constData());                                                                               \
        }                                                                                                              \
    } while (false)
