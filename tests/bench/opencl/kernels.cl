// The suite's kernels in OpenCL C, line for line the algorithms of ../cuda/main.cu. The sizes that
// the algorithms fix (tile widths, shared arrays) arrive as -D options built from common/bench.h.

kernel void empty(void) {}

kernel void triad(global float* a, global const float* b, global const float* c, uint n) {
  const uint index = get_global_id(0);
  if (index < n) a[index] = b[index] + TRIAD_SCALE * c[index];
}

void sum_block(global const uint* input, global uint* block_sums, local uint* partial) {
  const uint thread = get_local_id(0);
  partial[thread] = input[get_global_id(0)];
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint stride = BLOCK_THREADS / 2; stride > 0; stride /= 2) {
    if (thread < stride) partial[thread] += partial[thread + stride];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (thread == 0) block_sums[get_group_id(0)] = partial[0];
}

kernel void reduce_shared(global const uint* input, global uint* block_sums) {
  local uint partial[BLOCK_THREADS];
  sum_block(input, block_sums, partial);
}

kernel void reduce_shared_guarded(global const uint* input, global uint* block_sums, uint n) {
  local uint partial[BLOCK_THREADS];
  if (get_global_id(0) >= n) return;
  sum_block(input, block_sums, partial);
}

#ifdef cl_khr_subgroups
#pragma OPENCL EXTENSION cl_khr_subgroups : enable
// OpenCL C has no shuffle in its core; the closest portable form of a warp-shuffle reduction is
// the sub-group reduction, which on a GPU compiles to the same shuffles.
kernel void reduce_shuffle(global const uint* input, global uint* block_sums) {
  local uint group_sums[BLOCK_THREADS];
  const uint value = sub_group_reduce_add(input[get_global_id(0)]);
  if (get_sub_group_local_id() == 0) group_sums[get_sub_group_id()] = value;
  barrier(CLK_LOCAL_MEM_FENCE);
  if (get_local_id(0) == 0) {
    uint sum = 0;
    for (uint group = 0; group < get_num_sub_groups(); ++group) sum += group_sums[group];
    block_sums[get_group_id(0)] = sum;
  }
}
#endif

kernel void gemm(global const float* a, global const float* b, global float* c, uint n) {
  local float a_tile[GEMM_TILE][GEMM_TILE];
  local float b_tile[GEMM_TILE][GEMM_TILE];
  const uint x = get_local_id(0), y = get_local_id(1);
  const uint row = get_global_id(1), column = get_global_id(0);
  float sum = 0.0f;
  for (uint base = 0; base < n; base += GEMM_TILE) {
    a_tile[y][x] = a[row * n + base + x];
    b_tile[y][x] = b[(base + y) * n + column];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint k = 0; k < GEMM_TILE; ++k) sum += a_tile[y][k] * b_tile[k][x];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  c[row * n + column] = sum;
}

kernel void transpose(global const float* input, global float* output, uint n) {
  local float staging[TRANSPOSE_TILE][TRANSPOSE_TILE + 1];
  const uint tx = get_local_id(0), ty = get_local_id(1);
  uint x = get_group_id(0) * TRANSPOSE_TILE + tx;
  uint y = get_group_id(1) * TRANSPOSE_TILE + ty;
  for (uint row = 0; row < TRANSPOSE_TILE; row += TRANSPOSE_ROWS) staging[ty + row][tx] = input[(y + row) * n + x];
  barrier(CLK_LOCAL_MEM_FENCE);
  x = get_group_id(1) * TRANSPOSE_TILE + tx;
  y = get_group_id(0) * TRANSPOSE_TILE + ty;
  for (uint row = 0; row < TRANSPOSE_TILE; row += TRANSPOSE_ROWS) output[(y + row) * n + x] = staging[tx][ty + row];
}

kernel void block_scan(global const uint* input, global uint* output) {
  local uint buffers[2][BLOCK_THREADS];
  const uint thread = get_local_id(0);
  uint current = 0;
  buffers[current][thread] = input[get_global_id(0)];
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint offset = 1; offset < BLOCK_THREADS; offset *= 2) {
    const uint value = buffers[current][thread];
    buffers[1 - current][thread] = thread >= offset ? value + buffers[current][thread - offset] : value;
    current = 1 - current;
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  output[get_global_id(0)] = buffers[current][thread];
}

kernel void histogram(global const uchar* input, global uint* bins) {
  local uint local_bins[HISTOGRAM_BINS];
  const uint thread = get_local_id(0);
  local_bins[thread] = 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  const uint base = get_group_id(0) * BLOCK_THREADS * HISTOGRAM_ITEMS_PER_THREAD + thread;
  for (uint item = 0; item < HISTOGRAM_ITEMS_PER_THREAD; ++item)
    atomic_inc(&local_bins[input[base + item * BLOCK_THREADS]]);
  barrier(CLK_LOCAL_MEM_FENCE);
  atomic_add(&bins[thread], local_bins[thread]);
}

kernel void mandelbrot(global uint* image, uint n) {
  const uint x = get_global_id(0), y = get_global_id(1);
  const float real = -2.0f + 2.5f * (float)x / (float)n;
  const float imaginary = -1.25f + 2.5f * (float)y / (float)n;
  float zr = 0.0f, zi = 0.0f;
  uint iteration = 0;
  while (iteration < MANDELBROT_ITERATIONS && zr * zr + zi * zi <= 4.0f) {
    const float next = zr * zr - zi * zi + real;
    zi = 2.0f * zr * zi + imaginary;
    zr = next;
    ++iteration;
  }
  image[y * n + x] = iteration;
}

kernel void nbody(global const float4* bodies, global float4* acceleration, uint count) {
  local float4 sources[BLOCK_THREADS];
  const uint thread = get_local_id(0);
  const float4 self = bodies[get_global_id(0)];
  float ax = 0.0f, ay = 0.0f, az = 0.0f;
  for (uint base = 0; base < count; base += BLOCK_THREADS) {
    sources[thread] = bodies[base + thread];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint source = 0; source < BLOCK_THREADS; ++source) {
      const float dx = sources[source].x - self.x;
      const float dy = sources[source].y - self.y;
      const float dz = sources[source].z - self.z;
      const float inverse = rsqrt(dx * dx + dy * dy + dz * dz + NBODY_SOFTENING);
      const float weight = sources[source].w * inverse * inverse * inverse;
      ax += weight * dx;
      ay += weight * dy;
      az += weight * dz;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  acceleration[get_global_id(0)] = (float4)(ax, ay, az, 0.0f);
}

kernel void stencil(global const float* input, global float* output, uint n) {
  const uint x = get_global_id(0), y = get_global_id(1);
  const uint at = y * n + x;
  if (x == 0 || y == 0 || x == n - 1 || y == n - 1)
    output[at] = input[at];
  else
    output[at] = 0.2f * (input[at] + input[at - 1] + input[at + 1] + input[at - n] + input[at + n]);
}

void barrier_trips(global const uint* input, global const uint* trips_per_block, global uint* output, local uint* exchange) {
  const uint thread = get_local_id(0);
  uint value = input[get_global_id(0)];
  const uint trips = trips_per_block[get_group_id(0)];
  for (uint trip = 0; trip < trips; ++trip) {
    exchange[thread] = value;
    barrier(CLK_LOCAL_MEM_FENCE);
    value = exchange[(thread + 1) % BLOCK_THREADS] * 3 + thread;
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  output[get_global_id(0)] = value;
}

kernel void barrier_loop(global const uint* input, global const uint* trips_per_block, global uint* output) {
  local uint exchange[BLOCK_THREADS];
  barrier_trips(input, trips_per_block, output, exchange);
}

kernel void barrier_loop_guarded(global const uint* input, global const uint* trips_per_block, global uint* output, uint n) {
  local uint exchange[BLOCK_THREADS];
  if (get_global_id(0) >= n) return;
  barrier_trips(input, trips_per_block, output, exchange);
}

kernel void barrier_decisions(global const uint* input, global const uint* trips_per_block, global uint* output) {
  local uint exchange[BLOCK_THREADS];
  const uint thread = get_local_id(0);
  uint value = input[get_global_id(0)];
  const uint trips = trips_per_block[get_group_id(0)];
  for (uint trip = 0; trip < trips; ++trip) {
    const bool odd = value & 1, high = value >> 31;
    exchange[thread] = value;
    barrier(CLK_LOCAL_MEM_FENCE);
    const uint next = exchange[(thread + 1) % BLOCK_THREADS];
    value = odd ? value * 3 + next : (value >> 1) ^ next;
    if (high) value += trip;
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  output[get_global_id(0)] = value;
}
