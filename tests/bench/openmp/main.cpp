// The OpenMP variant of the suite: each algorithm written by hand for CPU cores the way one would
// without CUDA (loops over the data rather than emulated threads), built with
// g++ -O3 -march=native -fopenmp. It is the bar that xcuda's generated code is compared with.
#include <omp.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

#include "../common/bench.h"

namespace {

using bench::block_threads;

void triad(float* a, const float* b, const float* c, std::size_t n) {
#pragma omp parallel for simd schedule(static)
  for (std::size_t index = 0; index < n; ++index) a[index] = b[index] + bench::triad_scale * c[index];
}

// Serves both reduction rows: a CPU has no warps, so the shared-memory tree and the warp-shuffle
// versions are the same per-block sum when written for it directly.
void block_sums(const std::uint32_t* input, std::uint32_t* sums, std::size_t blocks) {
#pragma omp parallel for schedule(static)
  for (std::size_t block = 0; block < blocks; ++block) {
    std::uint32_t sum = 0;
#pragma omp simd reduction(+ : sum)
    for (unsigned thread = 0; thread < block_threads; ++thread) sum += input[block * block_threads + thread];
    sums[block] = sum;
  }
}

// Rows in parallel, i-k-j order so the innermost loop streams through b and c with unit stride.
void gemm(const float* a, const float* b, float* c, std::size_t n) {
#pragma omp parallel for schedule(static)
  for (std::size_t row = 0; row < n; ++row) {
    float* c_row = c + row * n;
    for (std::size_t column = 0; column < n; ++column) c_row[column] = 0.0f;
    for (std::size_t k = 0; k < n; ++k) {
      const float a_value = a[row * n + k];
      const float* b_row = b + k * n;
#pragma omp simd
      for (std::size_t column = 0; column < n; ++column) c_row[column] += a_value * b_row[column];
    }
  }
}

void transpose(const float* input, float* output, std::size_t n) {
  constexpr std::size_t tile = bench::transpose_tile;
#pragma omp parallel for collapse(2) schedule(static)
  for (std::size_t tile_row = 0; tile_row < n; tile_row += tile)
    for (std::size_t tile_column = 0; tile_column < n; tile_column += tile)
      for (std::size_t row = tile_row; row < tile_row + tile; ++row)
        for (std::size_t column = tile_column; column < tile_column + tile; ++column)
          output[column * n + row] = input[row * n + column];
}

void block_scan(const std::uint32_t* input, std::uint32_t* output, std::size_t blocks) {
#pragma omp parallel for schedule(static)
  for (std::size_t block = 0; block < blocks; ++block) {
    std::uint32_t running = 0;
    for (std::size_t index = block * block_threads; index < (block + 1) * block_threads; ++index) {
      running += input[index];
      output[index] = running;
    }
  }
}

// Private histograms per thread, merged with atomics: the CPU analogue of shared-memory bins.
void histogram(const std::uint8_t* input, std::uint32_t* bins, std::size_t n) {
  for (unsigned bin = 0; bin < bench::histogram_bins; ++bin) bins[bin] = 0;
#pragma omp parallel
  {
    std::array<std::uint32_t, bench::histogram_bins> local{};
#pragma omp for schedule(static) nowait
    for (std::size_t index = 0; index < n; ++index) ++local[input[index]];
    for (unsigned bin = 0; bin < bench::histogram_bins; ++bin) {
#pragma omp atomic
      bins[bin] += local[bin];
    }
  }
}

void mandelbrot(std::uint32_t* image, unsigned n) {
  // Rows cost very different amounts, so they are handed out dynamically.
#pragma omp parallel for schedule(dynamic, 4)
  for (unsigned y = 0; y < n; ++y)
    for (unsigned x = 0; x < n; ++x) image[std::size_t(y) * n + x] = bench::mandelbrot_pixel(x, y, n);
}

void nbody(const float* bodies, float* acceleration, std::size_t count) {
#pragma omp parallel for schedule(static)
  for (std::size_t target = 0; target < count; ++target) {
    const float x = bodies[target * 4], y = bodies[target * 4 + 1], z = bodies[target * 4 + 2];
    float ax = 0.0f, ay = 0.0f, az = 0.0f;
#pragma omp simd reduction(+ : ax, ay, az)
    for (std::size_t source = 0; source < count; ++source) {
      const float dx = bodies[source * 4] - x;
      const float dy = bodies[source * 4 + 1] - y;
      const float dz = bodies[source * 4 + 2] - z;
      const float inverse = 1.0f / std::sqrt(dx * dx + dy * dy + dz * dz + bench::nbody_softening);
      const float weight = bodies[source * 4 + 3] * inverse * inverse * inverse;
      ax += weight * dx;
      ay += weight * dy;
      az += weight * dz;
    }
    acceleration[target * 4] = ax;
    acceleration[target * 4 + 1] = ay;
    acceleration[target * 4 + 2] = az;
    acceleration[target * 4 + 3] = 0.0f;
  }
}

void stencil(const float* input, float* output, std::size_t n) {
#pragma omp parallel for schedule(static)
  for (std::size_t y = 0; y < n; ++y) {
    const std::size_t row = y * n;
    if (y == 0 || y == n - 1) {
      for (std::size_t x = 0; x < n; ++x) output[row + x] = input[row + x];
      continue;
    }
    output[row] = input[row];
    output[row + n - 1] = input[row + n - 1];
#pragma omp simd
    for (std::size_t x = 1; x < n - 1; ++x)
      output[row + x] = 0.2f * (input[row + x] + input[row + x - 1] + input[row + x + 1] + input[row + x - n] +
                                input[row + x + n]);
  }
}

// The barriers of the CUDA version become the ends of a loop over a block's elements; `step` is
// bench::barrier_loop_step or bench::barrier_decision.
template <class Step>
void barrier_trips(const std::uint32_t* input, const std::uint32_t* trips, std::uint32_t* output, std::size_t blocks, Step step) {
#pragma omp parallel for schedule(dynamic)
  for (std::size_t block = 0; block < blocks; ++block) {
    std::array<std::uint32_t, block_threads> values, exchange;
    for (unsigned thread = 0; thread < block_threads; ++thread) values[thread] = input[block * block_threads + thread];
    for (std::uint32_t trip = 0; trip < trips[block]; ++trip) {
      exchange = values;
#pragma omp simd
      for (unsigned thread = 0; thread < block_threads; ++thread)
        values[thread] = step(exchange[thread], exchange[(thread + 1) % block_threads], thread, trip);
    }
    for (unsigned thread = 0; thread < block_threads; ++thread) output[block * block_threads + thread] = values[thread];
  }
}

// Wraps a call so it fits bench::measure, which expects refusals to be reported (OpenMP has none).
template <class Call>
auto always(Call call) {
  return [call] {
    call();
    return true;
  };
}

void run_suite(const bench::Options& options) {
  const bench::Sizes sizes = bench::sizes_for(options);
  const std::size_t elements = sizes.elements;
  {
    const auto b = bench::random_floats(elements, 1), c = bench::random_floats(elements, 2);
    std::vector<float> a(elements);
    const auto expected = bench::reference_triad(b, c);
    bench::measure(
        options, "triad", always([&] { triad(a.data(), b.data(), c.data(), elements); }),
        [&] { return bench::equal_nearly(a.data(), expected, 1e-6f); });
  }
  {
    const auto input = bench::random_words(elements, 3);
    const auto expected = bench::reference_block_sums(input);
    std::vector<std::uint32_t> sums(expected.size());
    // As with barrier_loop_guarded, the bounds test has nothing to stand for here.
    for (const char* name : {"reduce_shared", "reduce_shared_guarded", "reduce_shuffle"})
      bench::measure(
          options, name, always([&] { block_sums(input.data(), sums.data(), sums.size()); }),
          [&] { return bench::equal_exactly(sums.data(), expected); });
  }
  {
    const std::size_t n = sizes.gemm_n;
    const auto a = bench::random_floats(n * n, 4), b = bench::random_floats(n * n, 5);
    const auto expected = bench::reference_gemm(a, b, sizes.gemm_n);
    std::vector<float> c(n * n);
    bench::measure(
        options, "sgemm", always([&] { gemm(a.data(), b.data(), c.data(), n); }),
        [&] { return bench::equal_nearly(c.data(), expected, 1e-4f); });
  }
  {
    const std::size_t n = sizes.transpose_n;
    const auto input = bench::random_floats(n * n, 6);
    const auto expected = bench::reference_transpose(input, sizes.transpose_n);
    std::vector<float> output(input.size());
    bench::measure(
        options, "transpose", always([&] { transpose(input.data(), output.data(), n); }),
        [&] { return bench::equal_exactly(output.data(), expected); });
  }
  {
    const auto input = bench::random_words(elements, 8);
    const auto expected = bench::reference_block_scan(input);
    std::vector<std::uint32_t> output(input.size());
    bench::measure(
        options, "block_scan", always([&] { block_scan(input.data(), output.data(), elements / block_threads); }),
        [&] { return bench::equal_exactly(output.data(), expected); });
  }
  {
    const auto input = bench::random_bytes(sizes.histogram_n, 9);
    const auto expected = bench::reference_histogram(input);
    std::vector<std::uint32_t> bins(bench::histogram_bins);
    bench::measure(
        options, "histogram", always([&] { histogram(input.data(), bins.data(), input.size()); }),
        [&] { return bench::equal_exactly(bins.data(), expected); });
  }
  {
    const auto expected = bench::reference_mandelbrot(sizes.mandelbrot_n);
    std::vector<std::uint32_t> image(expected.size());
    bench::measure(
        options, "mandelbrot", always([&] { mandelbrot(image.data(), sizes.mandelbrot_n); }),
        [&] { return bench::mandelbrot_matches(image.data(), expected); });
  }
  {
    const auto bodies = bench::random_bodies(sizes.bodies);
    const auto expected = bench::reference_nbody(bodies);
    std::vector<float> acceleration(bodies.size());
    bench::measure(
        options, "nbody", always([&] { nbody(bodies.data(), acceleration.data(), sizes.bodies); }),
        [&] { return bench::equal_nearly(acceleration.data(), expected, 1e-3f); });
  }
  {
    const std::size_t n = sizes.stencil_n;
    const auto input = bench::random_floats(n * n, 10);
    const auto expected = bench::reference_stencil(input, sizes.stencil_n);
    std::vector<float> output(input.size());
    bench::measure(
        options, "stencil_2d", always([&] { stencil(input.data(), output.data(), n); }),
        [&] { return bench::equal_nearly(output.data(), expected, 1e-6f); });
  }
  {
    const auto input = bench::random_words(std::size_t(sizes.barrier_blocks) * block_threads, 11);
    const auto trips = bench::barrier_loop_trips(sizes.barrier_blocks);
    const auto expected = bench::reference_barrier_loop(input);
    // The guarded kernel's bounds test has nothing to stand for here: each loop runs to its end.
    for (const char* name : {"barrier_loop", "barrier_loop_guarded"}) {
      std::vector<std::uint32_t> output(input.size());
      bench::measure(
          options, name, always([&] { barrier_trips(input.data(), trips.data(), output.data(), sizes.barrier_blocks, bench::barrier_loop_step); }),
          [&] { return bench::equal_exactly(output.data(), expected); });
    }
    std::vector<std::uint32_t> output(input.size());
    const auto decided = bench::reference_barrier_decisions(input);
    bench::measure(
        options, "barrier_decisions", always([&] { barrier_trips(input.data(), trips.data(), output.data(), sizes.barrier_blocks, bench::barrier_decision); }),
        [&] { return bench::equal_exactly(output.data(), decided); });
  }
  {
    // The OpenMP analogue of an empty launch is an empty parallel region: fork, join, return.
    double start = bench::now_ms();
    for (unsigned launch = 0; launch < sizes.latency_launches; ++launch) {
#pragma omp parallel
      {
        asm volatile("" ::: "memory");  // keeps the region from being optimised away
      }
    }
    bench::report_latency("empty_launch", bench::now_ms() - start, sizes.latency_launches);

    const unsigned n = sizes.stream_elements;
    const auto b = bench::random_floats(n, 1), c = bench::random_floats(n, 2);
    std::vector<float> a(n);
    start = bench::now_ms();
    for (unsigned launch = 0; launch < sizes.stream_launches; ++launch) triad(a.data(), b.data(), c.data(), n);
    bench::report_latency("small_launch_stream", bench::now_ms() - start, sizes.stream_launches);
  }
}

}  // namespace

int main(int argc, char** argv) {
  run_suite(bench::parse_options(argc, argv));
  return 0;
}
