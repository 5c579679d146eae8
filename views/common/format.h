#pragma once

// Numbers and text for people, the same way in every view: counts with digit grouping, durations
// with a unit that fits, shares as percentages, expression values as Python writes them, and the
// engine's strings as QStrings.

#include "expr/expr.h"

#include <QLocale>
#include <QString>
#include <QVariant>

#include <cstdint>
#include <string>

namespace tilescope {
class TuningProblem;
}

namespace tilescope::views {

/// The locale numbers are written in: the user's, with digit grouping; English when it is "C".
QLocale numberLocale();

/// 2761 -> "2,761" (the locale's grouping; English when the locale is "C"). Counts beyond
/// 10^15 as "1.23 × 10^18".
QString formatCount(double n);
QString formatCount(std::uint64_t n);
/// 0.00042 -> "420 µs", 1.5 -> "1.50 s", 95 -> "1 min 35 s".
QString formatDuration(double seconds);
/// part / whole as "7.7 %" (with enough digits to not show 0.0 for a tiny non-zero share).
QString formatShare(double part, double whole);
/// A fraction as a percentage in a cell: "3 %", "0.8 %", "47 %" (one decimal below 10 % unless
/// the value is whole).
QString formatPercent(double fraction);
/// A value as Python's repr writes it: 64, 0.5, True, 'abc'.
QString formatValue(const expr::Value& value);
/// The engine's text (UTF-8) as a QString.
QString qs(const std::string& text);
/// Shape `index` of `problem` for people: its dims ("M=4096 N=4096 K=4096"); a problem whose
/// sizes are written in its ProblemSize ("ProblemSize 4096"); "(no shape)" without either.
QString shapeText(const TuningProblem& problem, std::size_t index);

/// Qt::TextAlignmentRole for numbers in tables.
QVariant numberAlignment();
/// Qt::TextAlignmentRole for text in tables (and their headers).
QVariant textAlignment();

} // namespace tilescope::views
