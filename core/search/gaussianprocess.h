#pragma once

// Gaussian-process regression for model-based search: a Matérn 5/2 kernel with one length scale
// per input dimension, a signal variance and a noise variance. Training points are appended with
// an O(n^2) Cholesky update; predictions at a set of candidate points are cached and kept up to
// date as points are added (O(n m) per point), so that ranking thousands of candidates stays cheap
// when the model already holds hundreds of observations.

#include <cstddef>
#include <memory>
#include <span>
#include <vector>

namespace tilescope {

class GaussianProcess {
public:
    struct Hyperparameters {
        std::vector<double> lengthScales; ///< one per input dimension
        double signalVariance = 1;
        double noiseVariance = 1e-4;
    };
    struct Prediction {
        double mean = 0;
        double variance = 0; ///< of the latent function (the noise not included)
    };

    /// A process over `dimensions` inputs, with unit length scales.
    explicit GaussianProcess(int dimensions);
    GaussianProcess(GaussianProcess&&) noexcept;
    GaussianProcess& operator=(GaussianProcess&&) noexcept;
    ~GaussianProcess();

    int dimensions() const;
    const Hyperparameters& hyperparameters() const;
    /// Refactors everything: O(n^3 + n^2 m) for n training points and m candidates.
    void setHyperparameters(const Hyperparameters& hyperparameters);
    /// The covariance of two inputs, noise not included.
    double kernel(std::span<const double> a, std::span<const double> b) const;

    /// Replaces the training set (row-major n x dimensions inputs) and refactors.
    void setData(std::span<const double> inputs, std::span<const double> targets);
    /// The same with new hyperparameters: one refactorisation instead of two.
    void setData(std::span<const double> inputs, std::span<const double> targets,
                 const Hyperparameters& hyperparameters);
    /// Appends one training point; O(n^2 + n m).
    void add(std::span<const double> input, double target);
    /// Changes the targets (the inputs stay): O(1); the next prediction pays one O(n^2) solve.
    void setTargets(std::span<const double> targets);
    std::size_t size() const;

    /// The posterior at one input: O(n^2).
    Prediction predict(std::span<const double> input) const;
    /// The log marginal likelihood of the targets under the current hyperparameters.
    double logMarginalLikelihood() const;

    /// Candidates: inputs whose predictions are cached. addCandidate returns its slot;
    /// removeCandidate moves the last candidate into the freed slot.
    std::size_t addCandidate(std::span<const double> input);
    /// Several candidates (row-major k x dimensions) at once, with blocked solves: O(n^2 k).
    /// Returns the slot of the first.
    std::size_t addCandidates(std::span<const double> inputs);
    void removeCandidate(std::size_t slot);
    void clearCandidates();
    std::size_t candidateCount() const;
    /// The posterior at every candidate (in slot order): O(n m).
    void predictCandidates(std::vector<double>& means, std::vector<double>& variances) const;

    /// Hyperparameters that maximise the log marginal likelihood of (row-major) inputs and
    /// standardised targets: a grid over a shared length scale and the noise-to-signal ratio,
    /// then one sweep over each dimension's length scale; the signal variance takes its
    /// closed-form optimum. O(g n^3) for g grid points: pass a subsample of at most a few hundred.
    static Hyperparameters fit(int dimensions, std::span<const double> inputs, std::span<const double> targets);

private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

} // namespace tilescope
