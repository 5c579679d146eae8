#include "search/searchsupport.h"

#include <algorithm>
#include <cmath>

namespace tilescope::search {

namespace {
constexpr std::uint64_t kMaxBitmap = std::uint64_t(1) << 28;
}

VisitedSet::VisitedSet(std::uint64_t size)
    : m_size(size) {
    if (size <= kMaxBitmap)
        m_bits.assign(static_cast<std::size_t>(size), false);
}

bool VisitedSet::contains(std::uint64_t index) const {
    if (index >= m_size)
        return true;
    if (!m_bits.empty())
        return m_bits[static_cast<std::size_t>(index)];
    return m_set.count(index) > 0;
}

bool VisitedSet::insert(std::uint64_t index) {
    if (index >= m_size)
        return false;
    if (!m_bits.empty()) {
        if (m_bits[static_cast<std::size_t>(index)])
            return false;
        m_bits[static_cast<std::size_t>(index)] = true;
    } else if (!m_set.insert(index).second) {
        return false;
    }
    ++m_count;
    return true;
}

FreshSource::FreshSource(std::uint64_t size, std::uint64_t seed)
    : m_size(size)
    , m_rng(seed) {}

std::uint64_t FreshSource::draw() {
    const auto slot = [this](std::uint64_t i) {
        const auto it = m_swapped.find(i);
        return it == m_swapped.end() ? i : it->second;
    };
    const std::uint64_t j = m_position + uniformBelow(m_rng, m_size - m_position);
    const std::uint64_t value = slot(j);
    if (j != m_position)
        m_swapped[j] = slot(m_position);
    m_swapped.erase(m_position);
    ++m_position;
    return value;
}

ScoreScale::ScoreScale(std::span<const double> scores) {
    if (scores.empty())
        return;
    const bool positive = std::all_of(scores.begin(), scores.end(), [](double s) { return s > 0; });
    const bool negative = std::all_of(scores.begin(), scores.end(), [](double s) { return s < 0; });
    m_mode = positive ? Mode::Positive : negative ? Mode::Negative : Mode::Mixed;
    if (m_mode == Mode::Mixed) {
        std::vector<double> magnitudes;
        for (double s : scores)
            magnitudes.push_back(std::abs(s));
        std::nth_element(magnitudes.begin(), magnitudes.begin() + static_cast<std::ptrdiff_t>(magnitudes.size() / 2),
                         magnitudes.end());
        m_scale = std::max(magnitudes[magnitudes.size() / 2], 1e-12);
    }
}

double ScoreScale::operator()(double score) const {
    switch (m_mode) {
    case Mode::Positive:
        return score > 0 ? std::log(score) : std::log(1e-300);
    case Mode::Negative:
        return score < 0 ? -std::log(-score) : -std::log(1e-300);
    case Mode::Mixed:
        break;
    }
    return std::asinh(score / m_scale);
}

InputEncoding::InputEncoding(const ConfigSpace& space) {
    for (int p = 0; p < space.parameterCount(); ++p) {
        const auto& values = space.parameterValues(p);
        if (values.size() < 2)
            continue;
        const std::size_t n = values.size();
        std::vector<double> numbers;
        bool positive = true;
        for (const auto& v : values) {
            if (!v.isNumber()) {
                positive = false;
                break;
            }
            const double x = v.kind == expr::Kind::Float ? v.f : static_cast<double>(v.i);
            positive = positive && x > 0;
            numbers.push_back(x);
        }
        std::vector<double> column(n);
        bool useLog = false;
        if (positive && numbers.size() == n) {
            const auto [lo, hi] = std::minmax_element(numbers.begin(), numbers.end());
            useLog = *hi >= 4 * *lo;
            if (useLog) {
                const double a = std::log2(*lo), b = std::log2(*hi);
                for (std::size_t i = 0; i < n; ++i)
                    column[i] = (std::log2(numbers[i]) - a) / (b - a);
            }
        }
        if (!useLog)
            for (std::size_t i = 0; i < n; ++i)
                column[i] = static_cast<double>(i) / static_cast<double>(n - 1);
        m_params.push_back(p);
        m_table.push_back(std::move(column));
    }
}

void InputEncoding::encode(const Config& config, std::vector<double>& out) const {
    for (std::size_t k = 0; k < m_params.size(); ++k)
        out.push_back(m_table[k][config[static_cast<std::size_t>(m_params[k])]]);
}

void Breeder::mutate(Config& child) {
    const double rate = 1.0 / static_cast<double>(std::max<std::size_t>(1, child.size()));
    for (std::size_t p = 0; p < child.size(); ++p) {
        const auto n = static_cast<int>(m_space.parameterValues(static_cast<int>(p)).size());
        if (n < 2 || uniform() >= rate)
            continue;
        int v = child[p];
        if (uniform() < 0.2) {
            v = static_cast<int>(uniformBelow(m_rng, static_cast<std::uint64_t>(n)));
        } else {
            v += uniform() < 0.5 ? -1 : 1;
            v = std::clamp(v, 0, n - 1);
        }
        child[p] = static_cast<std::uint16_t>(v);
    }
}

std::optional<std::uint64_t> Breeder::repair(const Config& child, const VisitedSet& visited) {
    for (auto kind : {ConfigSpace::NeighbourKind::Adjacent, ConfigSpace::NeighbourKind::AnyValue}) {
        std::vector<std::uint64_t> options;
        for (const Config& n : m_space.neighbours(child, kind)) {
            const auto index = m_space.indexOf(n);
            if (index && !visited.contains(*index))
                options.push_back(*index);
        }
        if (!options.empty())
            return options[static_cast<std::size_t>(uniformBelow(m_rng, options.size()))];
    }
    return std::nullopt;
}

std::optional<std::uint64_t> Breeder::child(const Config& a, const Config& b, const VisitedSet& visited) {
    Config c = a;
    for (std::size_t p = 0; p < c.size(); ++p)
        if (uniform() < 0.5)
            c[p] = b[p];
    mutate(c);
    if (const auto index = m_space.indexOf(c); index && !visited.contains(*index))
        return index;
    return repair(c, visited);
}

} // namespace tilescope::search
