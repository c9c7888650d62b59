// What the three variants of the suite (xcuda, PoCL, OpenMP) share: problem sizes, inputs,
// host references, result checks, timing and the line format that tests/bench/run reads.
// Keeping all of it here means the variants can differ only in how they run the kernels.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace bench {

struct Options {
  bool smoke = false;  // tiny sizes, one repetition: checks correctness only
  int repetitions = 7;
};

inline Options parse_options(int argc, char** argv) {
  Options options;
  for (int index = 1; index < argc; ++index) {
    if (std::strcmp(argv[index], "--smoke") == 0) {
      options.smoke = true;
      options.repetitions = 1;
    }
  }
  return options;
}

// Block sizes are fixed by the algorithms (tile widths, shared arrays), identical in all variants.
constexpr unsigned block_threads = 256;
constexpr unsigned gemm_tile = 16;
constexpr unsigned transpose_tile = 32;
constexpr unsigned transpose_rows = 8;  // a transpose block is 32 x 8 threads, 4 rows each
constexpr unsigned histogram_bins = 256;
constexpr unsigned histogram_items_per_thread = 16;
constexpr unsigned mandelbrot_tile = 16;
constexpr unsigned mandelbrot_iterations = 256;
constexpr unsigned stencil_block_x = 32;
constexpr unsigned stencil_block_y = 8;
constexpr unsigned barrier_loop_max_trips = 32;
constexpr float triad_scale = 3.0f;
constexpr float nbody_softening = 0.01f;

struct Sizes {
  unsigned elements;       // triad, reductions, scan
  unsigned gemm_n;         // square matrices
  unsigned transpose_n;    // square matrix
  unsigned histogram_n;    // bytes
  unsigned mandelbrot_n;   // square image
  unsigned bodies;
  unsigned stencil_n;      // square grid
  unsigned barrier_blocks;
  unsigned latency_launches;
  unsigned stream_launches;
  unsigned stream_elements;  // size of each small launch in the stream
};

inline Sizes sizes_for(const Options& options) {
  if (options.smoke)
    return {4096, 32, 64, 1u << 14, 64, 256, 64, 16, 100, 100, 1024};
  return {1u << 23, 512, 2048, 1u << 24, 1024, 4096, 2048, 1024, 2000, 10000, 4096};
}

// Deterministic inputs from a hash of the index, so every variant sees the same data.
inline std::uint32_t hash(std::uint32_t value) {
  value ^= value >> 16;
  value *= 0x7feb352dU;
  value ^= value >> 15;
  value *= 0x846ca68bU;
  value ^= value >> 16;
  return value;
}
inline float uniform(std::uint32_t index, std::uint32_t stream) {  // in [-1, 1)
  return static_cast<float>(hash(index * 2654435761U + stream) >> 8) * (2.0f / 16777216.0f) - 1.0f;
}
inline std::vector<float> random_floats(std::size_t count, std::uint32_t stream) {
  std::vector<float> values(count);
  for (std::size_t index = 0; index < count; ++index)
    values[index] = uniform(static_cast<std::uint32_t>(index), stream);
  return values;
}
inline std::vector<std::uint32_t> random_words(std::size_t count, std::uint32_t stream) {
  std::vector<std::uint32_t> values(count);
  for (std::size_t index = 0; index < count; ++index)
    values[index] = hash(static_cast<std::uint32_t>(index) + stream * 0x9e3779b9U) & 0xffffU;
  return values;
}
inline std::vector<std::uint8_t> random_bytes(std::size_t count, std::uint32_t stream) {
  std::vector<std::uint8_t> values(count);
  for (std::size_t index = 0; index < count; ++index)
    // Squaring a uniform value skews the distribution so some bins see heavy atomic contention.
    values[index] = static_cast<std::uint8_t>((hash(static_cast<std::uint32_t>(index) + stream) & 0xff) *
                                              (hash(static_cast<std::uint32_t>(index) ^ stream) & 0xff) >> 8);
  return values;
}
// Trip counts of the barrier loop, one per block; the kernels read them from memory so the
// compiler cannot know them.
inline std::vector<std::uint32_t> barrier_loop_trips(unsigned blocks) {
  std::vector<std::uint32_t> trips(blocks);
  for (unsigned block = 0; block < blocks; ++block) trips[block] = 1 + hash(block) % barrier_loop_max_trips;
  return trips;
}

// ---- host references: plain serial code, written for clarity rather than speed ----

inline std::vector<float> reference_triad(const std::vector<float>& b, const std::vector<float>& c) {
  std::vector<float> a(b.size());
  for (std::size_t index = 0; index < b.size(); ++index) a[index] = b[index] + triad_scale * c[index];
  return a;
}

inline std::vector<std::uint32_t> reference_block_sums(const std::vector<std::uint32_t>& input) {
  std::vector<std::uint32_t> sums(input.size() / block_threads, 0);
  for (std::size_t index = 0; index < input.size(); ++index) sums[index / block_threads] += input[index];
  return sums;
}

inline std::vector<float> reference_gemm(const std::vector<float>& a, const std::vector<float>& b, unsigned n) {
  std::vector<float> c(std::size_t(n) * n, 0.0f);
  for (unsigned row = 0; row < n; ++row)
    for (unsigned k = 0; k < n; ++k)
      for (unsigned column = 0; column < n; ++column)
        c[std::size_t(row) * n + column] += a[std::size_t(row) * n + k] * b[std::size_t(k) * n + column];
  return c;
}

inline std::vector<float> reference_transpose(const std::vector<float>& input, unsigned n) {
  std::vector<float> output(input.size());
  for (unsigned row = 0; row < n; ++row)
    for (unsigned column = 0; column < n; ++column)
      output[std::size_t(column) * n + row] = input[std::size_t(row) * n + column];
  return output;
}

inline std::vector<std::uint32_t> reference_block_scan(const std::vector<std::uint32_t>& input) {
  std::vector<std::uint32_t> output(input.size());
  std::uint32_t running = 0;
  for (std::size_t index = 0; index < input.size(); ++index) {
    if (index % block_threads == 0) running = 0;
    running += input[index];
    output[index] = running;
  }
  return output;
}

inline std::vector<std::uint32_t> reference_histogram(const std::vector<std::uint8_t>& input) {
  std::vector<std::uint32_t> bins(histogram_bins, 0);
  for (std::uint8_t value : input) ++bins[value];
  return bins;
}

inline std::uint32_t mandelbrot_pixel(unsigned x, unsigned y, unsigned n) {
  const float real = -2.0f + 2.5f * static_cast<float>(x) / static_cast<float>(n);
  const float imaginary = -1.25f + 2.5f * static_cast<float>(y) / static_cast<float>(n);
  float zr = 0.0f, zi = 0.0f;
  std::uint32_t iteration = 0;
  while (iteration < mandelbrot_iterations && zr * zr + zi * zi <= 4.0f) {
    const float next = zr * zr - zi * zi + real;
    zi = 2.0f * zr * zi + imaginary;
    zr = next;
    ++iteration;
  }
  return iteration;
}
inline std::vector<std::uint32_t> reference_mandelbrot(unsigned n) {
  std::vector<std::uint32_t> image(std::size_t(n) * n);
  for (unsigned y = 0; y < n; ++y)
    for (unsigned x = 0; x < n; ++x) image[std::size_t(y) * n + x] = mandelbrot_pixel(x, y, n);
  return image;
}

// Bodies are 4 floats: x, y, z, mass; accelerations are 4 floats: x, y, z, unused.
inline std::vector<float> random_bodies(unsigned bodies) {
  std::vector<float> values = random_floats(std::size_t(bodies) * 4, 7);
  for (unsigned body = 0; body < bodies; ++body) values[body * 4 + 3] = 0.5f + 0.5f * std::fabs(values[body * 4 + 3]);
  return values;
}
inline std::vector<float> reference_nbody(const std::vector<float>& bodies) {
  const std::size_t count = bodies.size() / 4;
  std::vector<float> acceleration(bodies.size(), 0.0f);
  for (std::size_t target = 0; target < count; ++target) {
    double sum[3] = {0, 0, 0};
    for (std::size_t source = 0; source < count; ++source) {
      double delta[3];
      for (int axis = 0; axis < 3; ++axis) delta[axis] = bodies[source * 4 + axis] - bodies[target * 4 + axis];
      const double distance_squared =
          delta[0] * delta[0] + delta[1] * delta[1] + delta[2] * delta[2] + nbody_softening;
      const double inverse = 1.0 / std::sqrt(distance_squared);
      const double weight = bodies[source * 4 + 3] * inverse * inverse * inverse;
      for (int axis = 0; axis < 3; ++axis) sum[axis] += weight * delta[axis];
    }
    for (int axis = 0; axis < 3; ++axis) acceleration[target * 4 + axis] = static_cast<float>(sum[axis]);
  }
  return acceleration;
}

// One Jacobi sweep of the 5-point Laplacian smoother; the border is copied unchanged.
inline std::vector<float> reference_stencil(const std::vector<float>& input, unsigned n) {
  std::vector<float> output(input);
  for (unsigned y = 1; y + 1 < n; ++y)
    for (unsigned x = 1; x + 1 < n; ++x) {
      const std::size_t at = std::size_t(y) * n + x;
      output[at] = 0.2f * (input[at] + input[at - 1] + input[at + 1] + input[at - n] + input[at + n]);
    }
  return output;
}

// Each block rotates its values through shared memory a data-dependent number of times, with a
// barrier on each side of the shared-memory exchange inside the loop. A trip's step makes a
// thread's next value from its own, its neighbour's (thread + 1) and the trip's number. The steps
// are lambdas, each a type of its own, so that a loop made for one inlines it and vectorises (as
// function pointers, OpenMP's barrier_decisions took 12.3 ms instead of 1.8).
inline constexpr auto barrier_loop_step = [](std::uint32_t, std::uint32_t next, unsigned thread, std::uint32_t) -> std::uint32_t {
  return next * 3 + thread;
};

// barrier_decisions' step: each thread decides from its value before the exchange and acts on
// its decisions after it.
inline constexpr auto barrier_decision = [](std::uint32_t value, std::uint32_t next, unsigned, std::uint32_t trip) -> std::uint32_t {
  const bool odd = value & 1, high = value >> 31;
  value = odd ? value * 3 + next : (value >> 1) ^ next;
  return high ? value + trip : value;
};

template <class Step>
std::vector<std::uint32_t> reference_barrier_trips(const std::vector<std::uint32_t>& input, Step step) {
  std::vector<std::uint32_t> output(input);
  std::vector<std::uint32_t> shared(block_threads);
  const auto trips = barrier_loop_trips(static_cast<unsigned>(input.size() / block_threads));
  for (std::size_t block = 0; block < trips.size(); ++block) {
    std::uint32_t* values = output.data() + block * block_threads;
    for (unsigned trip = 0; trip < trips[block]; ++trip) {
      std::copy(values, values + block_threads, shared.begin());
      for (unsigned thread = 0; thread < block_threads; ++thread)
        values[thread] = step(shared[thread], shared[(thread + 1) % block_threads], thread, trip);
    }
  }
  return output;
}

inline std::vector<std::uint32_t> reference_barrier_loop(const std::vector<std::uint32_t>& input) {
  return reference_barrier_trips(input, barrier_loop_step);
}

inline std::vector<std::uint32_t> reference_barrier_decisions(const std::vector<std::uint32_t>& input) {
  return reference_barrier_trips(input, barrier_decision);
}

// ---- checks ----

template <class Value>
bool equal_exactly(const Value* actual, const std::vector<Value>& expected) {
  return std::equal(expected.begin(), expected.end(), actual);
}

// Float results may legitimately differ in rounding (FMA contraction differs between compilers).
inline bool equal_nearly(const float* actual, const std::vector<float>& expected, float tolerance) {
  for (std::size_t index = 0; index < expected.size(); ++index) {
    const float scale = std::max(1.0f, std::fabs(expected[index]));
    if (!(std::fabs(actual[index] - expected[index]) <= tolerance * scale)) return false;
  }
  return true;
}

// An FMA-contracted iteration can leave the set one step earlier or later at the set's edge, so
// a few pixels may differ; a wrong kernel differs almost everywhere.
inline bool mandelbrot_matches(const std::uint32_t* actual, const std::vector<std::uint32_t>& expected) {
  std::size_t mismatches = 0;
  for (std::size_t index = 0; index < expected.size(); ++index) mismatches += actual[index] != expected[index];
  return mismatches * 100 <= expected.size();
}

// ---- timing and the report format read by tests/bench/run ----

inline double now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// `launch` runs the kernel once to completion and returns false if the implementation refused it.
// The first launch is timed alone because it includes any just-in-time compilation; the reported
// run time is the median of the later launches.
template <class Launch, class Check>
void measure(const Options& options, const char* kernel, Launch launch, Check check) {
  double start = now_ms();
  if (!launch()) {
    std::printf("RESULT %s unsupported\n", kernel);
    std::fflush(stdout);
    return;
  }
  const double first_ms = now_ms() - start;
  if (!check()) {
    std::printf("RESULT %s wrong\n", kernel);
    std::fflush(stdout);
    return;
  }
  std::vector<double> times;
  for (int repetition = 0; repetition < options.repetitions; ++repetition) {
    start = now_ms();
    if (!launch()) {
      std::printf("RESULT %s unsupported\n", kernel);
      return;
    }
    times.push_back(now_ms() - start);
  }
  std::sort(times.begin(), times.end());
  const double median_ms = times[times.size() / 2];
  // A repeated launch must still produce the right answer (e.g. no state left over between runs).
  std::printf("RESULT %s %s %.4f %.4f\n", kernel, check() ? "ok" : "wrong", first_ms, median_ms);
  std::fflush(stdout);
}

// Launch overheads, in microseconds per launch.
inline void report_latency(const char* what, double total_ms, unsigned launches) {
  std::printf("LATENCY %s %.3f\n", what, total_ms * 1000.0 / launches);
  std::fflush(stdout);
}

}  // namespace bench
