#include "search/gaussianprocess.h"

#include <Eigen/Cholesky>
#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace tilescope {

namespace {

using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;

const double kSqrt5 = std::sqrt(5.0);
const double kLog2Pi = std::log(2 * 3.14159265358979323846);

// Squared distances between the columns of a (d x p) and b (d x q), written into out (p x q).
void squaredDistances(const Eigen::Ref<const MatrixXd>& a, const Eigen::Ref<const MatrixXd>& b,
                      Eigen::Ref<MatrixXd> out) {
    const VectorXd a2 = a.colwise().squaredNorm().transpose();
    const Eigen::RowVectorXd b2 = b.colwise().squaredNorm();
    out.noalias() = -2.0 * a.transpose() * b;
    out.colwise() += a2;
    out.rowwise() += b2;
    out = out.cwiseMax(0.0);
}

// Matérn 5/2 of squared (scaled) distances, in place.
void maternInPlace(Eigen::Ref<MatrixXd> d2, double signal) {
    const Eigen::ArrayXXd t = d2.array().sqrt() * kSqrt5;
    d2.array() = signal * (1.0 + t + t.square() / 3.0) * (-t).exp();
}

double maternOfDistance(double r, double signal) {
    const double t = kSqrt5 * r;
    return signal * (1.0 + t + t * t / 3.0) * std::exp(-t);
}

// Grows a matrix's storage to at least (rows, cols), keeping its top-left contents.
void reserve(MatrixXd& m, Index rows, Index cols) {
    if (m.rows() >= rows && m.cols() >= cols)
        return;
    const Index r = m.rows() >= rows ? m.rows() : std::max<Index>(rows, 2 * m.rows());
    const Index c = m.cols() >= cols ? m.cols() : std::max<Index>(cols, 2 * m.cols());
    m.conservativeResize(r, c);
}

void reserve(VectorXd& v, Index size) {
    if (v.size() >= size)
        return;
    v.conservativeResize(std::max<Index>(size, 2 * v.size()));
}

// The concentrated log marginal likelihood of standardised targets for a correlation matrix built
// from scaled inputs plus `ratio` on the diagonal: the signal variance takes its optimum q / n.
double concentratedLikelihood(const MatrixXd& scaled, const VectorXd& y, double ratio, double* signalOut) {
    const Index n = scaled.cols();
    MatrixXd k(n, n);
    squaredDistances(scaled, scaled, k);
    k.diagonal().setZero();
    maternInPlace(k, 1.0);
    k.diagonal().array() += ratio;
    const Eigen::LLT<MatrixXd> llt(k);
    if (llt.info() != Eigen::Success)
        return -std::numeric_limits<double>::infinity();
    const VectorXd z = llt.matrixL().solve(y);
    const double q = std::max(z.squaredNorm() / static_cast<double>(n), 1e-12);
    double logDet = 0;
    for (Index i = 0; i < n; ++i)
        logDet += std::log(llt.matrixLLT()(i, i));
    if (signalOut)
        *signalOut = q;
    return -0.5 * static_cast<double>(n) * (std::log(q) + 1.0 + kLog2Pi) - logDet;
}

} // namespace

struct GaussianProcess::Impl {
    int d = 0;
    Hyperparameters hyp;
    VectorXd inverseScales; // 1 / length scale, per dimension
    double jitter = 0;      // added to the noise when a factorisation needs it

    Index n = 0;
    MatrixXd raw;    // d x capacity: training inputs as given
    MatrixXd scaled; // d x capacity: divided by the length scales
    MatrixXd chol;   // capacity x capacity: lower Cholesky factor of K + noise I (top-left n x n)
    VectorXd y;
    mutable VectorXd z; // L^-1 y
    mutable bool zDirty = true;

    Index m = 0;
    MatrixXd candRaw;
    MatrixXd candScaled;
    MatrixXd v;     // capacity x candidate capacity: L^-1 k(X, c) per candidate column
    VectorXd sumsq; // squared norm of each column of v (top n rows)

    double diagonal() const { return hyp.signalVariance + hyp.noiseVariance + jitter; }

    void scaleInto(std::span<const double> in, Eigen::Ref<VectorXd> out) const {
        for (int i = 0; i < d; ++i)
            out(i) = in[static_cast<std::size_t>(i)] * inverseScales(i);
    }

    void rescaleAll() {
        inverseScales.resize(d);
        for (int i = 0; i < d; ++i) {
            const double l = hyp.lengthScales[static_cast<std::size_t>(i)];
            inverseScales(i) = l > 0 ? 1.0 / l : 1.0;
        }
        if (n > 0)
            scaled.leftCols(n) = inverseScales.asDiagonal() * raw.leftCols(n);
        if (m > 0)
            candScaled.leftCols(m) = inverseScales.asDiagonal() * candRaw.leftCols(m);
    }

    void refactor() {
        zDirty = true;
        if (n == 0)
            return;
        MatrixXd k(n, n);
        squaredDistances(scaled.leftCols(n), scaled.leftCols(n), k);
        k.diagonal().setZero();
        maternInPlace(k, hyp.signalVariance);
        k.diagonal().array() += hyp.noiseVariance;
        jitter = 0;
        for (int attempt = 0;; ++attempt) {
            Eigen::LLT<MatrixXd> llt(k);
            if (llt.info() == Eigen::Success) {
                chol.topLeftCorner(n, n) = llt.matrixL();
                break;
            }
            if (attempt >= 12)
                throw std::runtime_error("GaussianProcess: the covariance matrix is not positive definite");
            const double extra = jitter == 0 ? 1e-10 * hyp.signalVariance : jitter * 9;
            jitter += extra;
            k.diagonal().array() += extra;
        }
        if (m > 0) {
            auto block = v.topLeftCorner(n, m);
            squaredDistances(scaled.leftCols(n), candScaled.leftCols(m), block);
            maternInPlace(block, hyp.signalVariance);
            chol.topLeftCorner(n, n).triangularView<Eigen::Lower>().solveInPlace(block);
            sumsq.head(m) = block.colwise().squaredNorm().transpose();
        }
    }

    const VectorXd& solvedTargets() const {
        if (zDirty) {
            z = chol.topLeftCorner(n, n).triangularView<Eigen::Lower>().solve(y.head(n));
            zDirty = false;
        }
        return z;
    }
};

GaussianProcess::GaussianProcess(int dimensions)
    : m_impl(std::make_unique<Impl>()) {
    if (dimensions < 0)
        throw std::invalid_argument("GaussianProcess: negative dimensions");
    m_impl->d = dimensions;
    m_impl->hyp.lengthScales.assign(static_cast<std::size_t>(dimensions), 1.0);
    m_impl->rescaleAll();
    m_impl->raw.resize(dimensions, 0);
    m_impl->scaled.resize(dimensions, 0);
    m_impl->candRaw.resize(dimensions, 0);
    m_impl->candScaled.resize(dimensions, 0);
}

GaussianProcess::GaussianProcess(GaussianProcess&&) noexcept = default;
GaussianProcess& GaussianProcess::operator=(GaussianProcess&&) noexcept = default;
GaussianProcess::~GaussianProcess() = default;

int GaussianProcess::dimensions() const {
    return m_impl->d;
}

const GaussianProcess::Hyperparameters& GaussianProcess::hyperparameters() const {
    return m_impl->hyp;
}

void GaussianProcess::setHyperparameters(const Hyperparameters& hyperparameters) {
    Impl& s = *m_impl;
    if (hyperparameters.lengthScales.size() != static_cast<std::size_t>(s.d))
        throw std::invalid_argument("GaussianProcess: one length scale per dimension");
    s.hyp = hyperparameters;
    s.rescaleAll();
    s.refactor();
}

double GaussianProcess::kernel(std::span<const double> a, std::span<const double> b) const {
    const Impl& s = *m_impl;
    double r2 = 0;
    for (int i = 0; i < s.d; ++i) {
        const double t = (a[static_cast<std::size_t>(i)] - b[static_cast<std::size_t>(i)]) * s.inverseScales(i);
        r2 += t * t;
    }
    return maternOfDistance(std::sqrt(r2), s.hyp.signalVariance);
}

void GaussianProcess::setData(std::span<const double> inputs, std::span<const double> targets,
                              const Hyperparameters& hyperparameters) {
    if (hyperparameters.lengthScales.size() != static_cast<std::size_t>(m_impl->d))
        throw std::invalid_argument("GaussianProcess: one length scale per dimension");
    m_impl->hyp = hyperparameters;
    setData(inputs, targets);
}

void GaussianProcess::setData(std::span<const double> inputs, std::span<const double> targets) {
    Impl& s = *m_impl;
    const auto n = static_cast<Index>(targets.size());
    if (inputs.size() != targets.size() * static_cast<std::size_t>(s.d))
        throw std::invalid_argument("GaussianProcess: inputs and targets disagree in size");
    s.n = n;
    // Room to grow: the points added next must not reallocate the factor and the cache at once.
    const Index room = n + n / 4 + 16;
    reserve(s.raw, s.d, room);
    reserve(s.scaled, s.d, room);
    reserve(s.chol, room, room);
    reserve(s.y, room);
    reserve(s.v, room, s.v.cols());
    for (Index j = 0; j < n; ++j)
        for (int i = 0; i < s.d; ++i)
            s.raw(i, j) =
                inputs[static_cast<std::size_t>(j) * static_cast<std::size_t>(s.d) + static_cast<std::size_t>(i)];
    s.y.head(n) = Eigen::Map<const VectorXd>(targets.data(), n);
    s.rescaleAll();
    s.refactor();
}

void GaussianProcess::add(std::span<const double> input, double target) {
    Impl& s = *m_impl;
    const Index n0 = s.n;
    reserve(s.raw, s.d, n0 + 1);
    reserve(s.scaled, s.d, n0 + 1);
    reserve(s.chol, n0 + 1, n0 + 1);
    reserve(s.y, n0 + 1);
    reserve(s.v, n0 + 1, s.v.cols());
    for (int i = 0; i < s.d; ++i)
        s.raw(i, n0) = input[static_cast<std::size_t>(i)];
    s.scaled.col(n0) = s.inverseScales.asDiagonal() * s.raw.col(n0);

    VectorXd l;
    double dd = s.diagonal();
    if (n0 > 0) {
        MatrixXd k(n0, 1);
        squaredDistances(s.scaled.leftCols(n0), s.scaled.col(n0), k);
        maternInPlace(k, s.hyp.signalVariance);
        l = s.chol.topLeftCorner(n0, n0).triangularView<Eigen::Lower>().solve(k.col(0));
        dd -= l.squaredNorm();
        s.chol.row(n0).head(n0) = l.transpose();
    }
    // The posterior variance of the new point is at least the noise: rounding in an ill-conditioned
    // factor must not make the pivot tiny (that would blow up every cached prediction).
    dd = std::max({dd, s.hyp.noiseVariance + s.jitter, 1e-10 * s.hyp.signalVariance});
    const double lnn = std::sqrt(dd);
    s.chol(n0, n0) = lnn;
    s.y(n0) = target;
    if (s.m > 0) {
        MatrixXd kc(1, s.m);
        squaredDistances(s.scaled.col(n0), s.candScaled.leftCols(s.m), kc);
        maternInPlace(kc, s.hyp.signalVariance);
        Eigen::RowVectorXd row = kc.row(0);
        if (n0 > 0)
            row.noalias() -= l.transpose() * s.v.topLeftCorner(n0, s.m);
        row /= lnn;
        s.v.row(n0).head(s.m) = row;
        s.sumsq.head(s.m) += row.transpose().cwiseAbs2();
    }
    s.n = n0 + 1;
    s.zDirty = true;
}

void GaussianProcess::setTargets(std::span<const double> targets) {
    Impl& s = *m_impl;
    if (targets.size() != static_cast<std::size_t>(s.n))
        throw std::invalid_argument("GaussianProcess: one target per training point");
    s.y.head(s.n) = Eigen::Map<const VectorXd>(targets.data(), s.n);
    s.zDirty = true;
}

std::size_t GaussianProcess::size() const {
    return static_cast<std::size_t>(m_impl->n);
}

GaussianProcess::Prediction GaussianProcess::predict(std::span<const double> input) const {
    const Impl& s = *m_impl;
    Prediction p;
    p.variance = s.hyp.signalVariance;
    if (s.n == 0)
        return p;
    VectorXd x(s.d);
    s.scaleInto(input, x);
    MatrixXd k(s.n, 1);
    squaredDistances(s.scaled.leftCols(s.n), x, k);
    maternInPlace(k, s.hyp.signalVariance);
    const VectorXd vv = s.chol.topLeftCorner(s.n, s.n).triangularView<Eigen::Lower>().solve(k.col(0));
    p.mean = vv.dot(s.solvedTargets());
    p.variance = std::max(0.0, s.hyp.signalVariance - vv.squaredNorm());
    return p;
}

double GaussianProcess::logMarginalLikelihood() const {
    const Impl& s = *m_impl;
    if (s.n == 0)
        return 0;
    const VectorXd& z = s.solvedTargets();
    double logDet = 0;
    for (Index i = 0; i < s.n; ++i)
        logDet += std::log(s.chol(i, i));
    return -0.5 * z.squaredNorm() - logDet - 0.5 * static_cast<double>(s.n) * kLog2Pi;
}

std::size_t GaussianProcess::addCandidate(std::span<const double> input) {
    return addCandidates(input.first(static_cast<std::size_t>(m_impl->d)));
}

std::size_t GaussianProcess::addCandidates(std::span<const double> inputs) {
    Impl& s = *m_impl;
    const Index j0 = s.m;
    const Index k = s.d > 0 ? static_cast<Index>(inputs.size()) / s.d : 1;
    if (k == 0)
        return static_cast<std::size_t>(j0);
    reserve(s.candRaw, s.d, j0 + k);
    reserve(s.candScaled, s.d, j0 + k);
    reserve(s.v, std::max<Index>(s.v.rows(), s.n), j0 + k);
    reserve(s.sumsq, j0 + k);
    if (s.d > 0)
        s.candRaw.middleCols(j0, k) = Eigen::Map<const MatrixXd>(inputs.data(), s.d, k);
    s.candScaled.middleCols(j0, k) = s.inverseScales.asDiagonal() * s.candRaw.middleCols(j0, k);
    s.sumsq.segment(j0, k).setZero();
    if (s.n > 0) {
        auto block = s.v.block(0, j0, s.n, k);
        squaredDistances(s.scaled.leftCols(s.n), s.candScaled.middleCols(j0, k), block);
        maternInPlace(block, s.hyp.signalVariance);
        s.chol.topLeftCorner(s.n, s.n).triangularView<Eigen::Lower>().solveInPlace(block);
        s.sumsq.segment(j0, k) = block.colwise().squaredNorm().transpose();
    }
    s.m = j0 + k;
    return static_cast<std::size_t>(j0);
}

void GaussianProcess::removeCandidate(std::size_t slot) {
    Impl& s = *m_impl;
    const auto j = static_cast<Index>(slot);
    if (j >= s.m)
        throw std::out_of_range("GaussianProcess: no such candidate");
    const Index last = s.m - 1;
    if (j != last) {
        s.candRaw.col(j) = s.candRaw.col(last);
        s.candScaled.col(j) = s.candScaled.col(last);
        if (s.n > 0)
            s.v.col(j).head(s.n) = s.v.col(last).head(s.n);
        s.sumsq(j) = s.sumsq(last);
    }
    s.m = last;
}

void GaussianProcess::clearCandidates() {
    m_impl->m = 0;
}

std::size_t GaussianProcess::candidateCount() const {
    return static_cast<std::size_t>(m_impl->m);
}

void GaussianProcess::predictCandidates(std::vector<double>& means, std::vector<double>& variances) const {
    const Impl& s = *m_impl;
    const auto m = static_cast<std::size_t>(s.m);
    means.assign(m, 0.0);
    variances.assign(m, s.hyp.signalVariance);
    if (s.n == 0 || m == 0)
        return;
    Eigen::Map<VectorXd> meanMap(means.data(), s.m);
    meanMap.noalias() = s.v.topLeftCorner(s.n, s.m).transpose() * s.solvedTargets();
    for (std::size_t j = 0; j < m; ++j)
        variances[j] = std::max(0.0, s.hyp.signalVariance - s.sumsq(static_cast<Index>(j)));
}

GaussianProcess::Hyperparameters GaussianProcess::fit(int dimensions, std::span<const double> inputs,
                                                      std::span<const double> targets) {
    Hyperparameters best;
    best.lengthScales.assign(static_cast<std::size_t>(dimensions), 0.5);
    best.signalVariance = 1;
    best.noiseVariance = 1e-2;
    const auto n = static_cast<Index>(targets.size());
    if (n < 3 || dimensions == 0)
        return best;
    const MatrixXd x = Eigen::Map<const MatrixXd>(inputs.data(), dimensions, n);
    const VectorXd y = Eigen::Map<const VectorXd>(targets.data(), n);

    const double scales[] = {0.08, 0.15, 0.3, 0.5, 0.8, 1.3, 2.2};
    const double ratios[] = {1e-4, 1e-3, 1e-2, 0.1, 0.5}; // timing noise is rarely below 1 %
    double bestLml = -std::numeric_limits<double>::infinity();
    std::vector<double> lengths = best.lengthScales;
    double bestRatio = 1e-2;
    double bestSignal = 1;
    auto evaluate = [&](const std::vector<double>& ls, double ratio) {
        VectorXd inv(dimensions);
        for (int i = 0; i < dimensions; ++i)
            inv(i) = 1.0 / ls[static_cast<std::size_t>(i)];
        const MatrixXd scaled = inv.asDiagonal() * x;
        double signal = 1;
        const double lml = concentratedLikelihood(scaled, y, ratio, &signal);
        if (lml > bestLml) {
            bestLml = lml;
            lengths = ls;
            bestRatio = ratio;
            bestSignal = signal;
            return true;
        }
        return false;
    };
    for (double l : scales)
        for (double r : ratios)
            evaluate(std::vector<double>(static_cast<std::size_t>(dimensions), l), r);
    // One sweep over each dimension: a parameter that matters little gets a long length scale.
    for (int i = 0; i < dimensions; ++i) {
        for (double factor : {0.4, 2.5, 6.0}) {
            std::vector<double> ls = lengths;
            double& l = ls[static_cast<std::size_t>(i)];
            l = std::clamp(l * factor, 0.03, 30.0);
            evaluate(ls, bestRatio);
        }
    }
    best.lengthScales = lengths;
    best.signalVariance = bestSignal;
    best.noiseVariance = bestRatio * bestSignal;
    return best;
}

} // namespace tilescope
