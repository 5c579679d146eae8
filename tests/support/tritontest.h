#pragma once

// For the suites that compile Triton kernels: Triton is there when the Python Tilescope runs its
// helpers with ($TILESCOPE_PYTHON, else python3) imports triton. Without it a test that needs it
// reports a skip with the reason, except under CI with TILESCOPE_PYTHON set (the README's test
// command sets it to a virtual environment with Triton), where a skip would hide that the test
// never ran.

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
            if (underCi() && qEnvironmentVariableIsSet("TILESCOPE_PYTHON"))                                            \
                QFAIL(message_.constData());                                                                           \
            QSKIP(message_.constData());                                                                               \
        }                                                                                                              \
    } while (false)
