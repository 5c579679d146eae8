#include "common/format.h"

#include "spec/tuningproblem.h"

#include <QLocale>
#include <QObject>
#include <QStringList>

#include <algorithm>
#include <cmath>

namespace tilescope::views {

QLocale numberLocale() {
    QLocale locale;
    if (locale.language() == QLocale::C)
        locale = QLocale(QLocale::English, QLocale::UnitedStates);
    locale.setNumberOptions(locale.numberOptions() & ~QLocale::OmitGroupSeparator);
    return locale;
}

QString formatCount(double n) {
    if (!std::isfinite(n))
        return QStringLiteral("—");
    if (std::abs(n) < 1e15)
        return numberLocale().toString(static_cast<qlonglong>(std::llround(n)));
    const int exponent = static_cast<int>(std::floor(std::log10(std::abs(n))));
    const double mantissa = n / std::pow(10.0, exponent);
    return QStringLiteral("%1 × 10^%2").arg(numberLocale().toString(mantissa, 'f', 2)).arg(exponent);
}

QString formatCount(std::uint64_t n) {
    if (n < std::uint64_t(1'000'000'000'000'000))
        return numberLocale().toString(static_cast<qulonglong>(n));
    return formatCount(static_cast<double>(n));
}

QString formatDuration(double seconds) {
    const QLocale locale = numberLocale();
    if (!std::isfinite(seconds) || seconds < 0)
        return QStringLiteral("—");
    if (seconds < 1e-3)
        return QStringLiteral("%1 µs").arg(locale.toString(seconds * 1e6, 'f', seconds < 1e-5 ? 1 : 0));
    if (seconds < 1)
        return QStringLiteral("%1 ms").arg(locale.toString(seconds * 1e3, 'f', seconds < 1e-2 ? 2 : 1));
    if (seconds < 60)
        return QStringLiteral("%1 s").arg(locale.toString(seconds, 'f', 2));
    const auto whole = static_cast<qlonglong>(std::llround(seconds));
    return QStringLiteral("%1 min %2 s").arg(whole / 60).arg(whole % 60, 2, 10, QLatin1Char('0'));
}

QString formatShare(double part, double whole) {
    if (!(whole > 0) || !std::isfinite(part))
        return QStringLiteral("—");
    const double percent = 100.0 * part / whole;
    int decimals = 1;
    if (percent > 0 && percent < 0.1)
        decimals = std::min(6, 1 - static_cast<int>(std::floor(std::log10(percent))));
    QString text = numberLocale().toString(percent, 'f', decimals);
    if (decimals > 1) {
        // Two significant digits for tiny shares, without trailing zeros: 0.0001 %, 0.012 %.
        const QChar point = numberLocale().decimalPoint().at(0);
        while (text.endsWith(QLatin1Char('0')) && text.indexOf(point) >= 0)
            text.chop(1);
    }
    return QStringLiteral("%1 %").arg(text);
}

QString formatPercent(double fraction) {
    const double v = 100 * fraction;
    const bool whole = std::fabs(v - std::round(v)) < 0.05;
    return QStringLiteral("%1 %").arg(v, 0, 'f', whole || std::fabs(v) >= 10 ? 0 : 1);
}

QString shapeText(const TuningProblem& problem, std::size_t index) {
    if (index < problem.shapes.size())
        if (const std::string label = problem.shapes[index].label(); !label.empty())
            return qs(label);
    if (!problem.problemSize.empty()) {
        QStringList sizes;
        for (const std::string& size : problem.problemSize)
            sizes << qs(size);
        return QObject::tr("ProblemSize %1").arg(sizes.join(QStringLiteral(" × ")));
    }
    return QObject::tr("(no shape)");
}

QString formatValue(const expr::Value& value) {
    return qs(expr::repr(value));
}

QString qs(const std::string& text) {
    return QString::fromStdString(text);
}

QVariant numberAlignment() {
    return QVariant::fromValue(Qt::Alignment(Qt::AlignRight | Qt::AlignVCenter));
}

QVariant textAlignment() {
    return QVariant::fromValue(Qt::Alignment(Qt::AlignLeft | Qt::AlignVCenter));
}

} // namespace tilescope::views
