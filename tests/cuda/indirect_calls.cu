// Calls whose target is only known at run time, and leaving a thread from inside a function:
// virtual functions (objects built on the device, so their vtables are device tables), one of
// them waiting at __syncthreads; a __device__ table of function pointers; an indexed branch
// (brx.idx over a .branchtargets list); `exit` inside a __noinline__ function, reached directly
// and through a function pointer, after which a __syncthreads must not wait for the exited
// threads; and a trap inside a function, which fails its launch.
#include "check.h"

#include <new>
#include <vector>

struct Shape {
  int size;
  __device__ explicit Shape(int s) : size(s) {}
  __device__ virtual int area() const = 0;
  __device__ virtual int corners() const { return 0; }
  // Every thread of a block calls this on objects of the same type, so the barrier inside is met.
  __device__ virtual int block_total(int* scratch, int value) const {
    scratch[threadIdx.x] = value;
    __syncthreads();
    int total = 0;
    for (unsigned k = 0; k < blockDim.x; ++k) total += scratch[k];
    __syncthreads();
    return total;
  }
};

struct Square : Shape {
  __device__ explicit Square(int s) : Shape(s) {}
  __device__ int area() const override { return size * size; }
  __device__ int corners() const override { return 4; }
};

struct Triangle : Shape {
  __device__ explicit Triangle(int s) : Shape(s) {}
  __device__ int area() const override { return size * size / 2; }
  __device__ int corners() const override { return 3; }
  __device__ int block_total(int* scratch, int value) const override { return -Shape::block_total(scratch, value); }
};

struct Disc : Shape {
  __device__ explicit Disc(int s) : Shape(s) {}
  __device__ int area() const override { return 3 * size * size; }
};

constexpr int slot_bytes = 32;
static_assert(sizeof(Square) <= slot_bytes && sizeof(Triangle) <= slot_bytes && sizeof(Disc) <= slot_bytes);

__global__ void build(char* storage, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  char* slot = storage + i * slot_bytes;
  // The type is the block's, so that block_total is called uniformly.
  switch (blockIdx.x % 3) {
    case 0: new (slot) Square(i % 17); break;
    case 1: new (slot) Triangle(i % 17); break;
    default: new (slot) Disc(i % 17); break;
  }
}

__global__ void use_shapes(const char* storage, int* out, int n) {
  __shared__ int scratch[128];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  const Shape* shape = reinterpret_cast<const Shape*>(storage + i * slot_bytes);
  int total = shape->block_total(scratch, i % 5);
  if (i < n) out[i] = shape->area() * 10 + shape->corners() + total * 1000;
}

__device__ __noinline__ int add(int a, int b) { return a + b; }
__device__ __noinline__ int subtract(int a, int b) { return a - b; }
__device__ __noinline__ int multiply(int a, int b) { return a * b; }
__device__ __noinline__ int quit(int a, int) {
  asm volatile("exit;");
  return a;
}
__device__ int (*operations[4])(int, int) = {add, subtract, multiply, quit};

// The index-th of four results, through brx.idx; the index is taken modulo 4 first.
__device__ __noinline__ int indexed_branch(int index) {
  int result;
  asm volatile(
      "{\n\t"
      ".reg .b32 position;\n\t"
      "and.b32 position, %1, 3;\n\t"
      "indexed_targets: .branchtargets case_0, case_1, case_2, case_3;\n\t"
      "brx.idx position, indexed_targets;\n"
      "case_0:\n\tmov.u32 %0, 101;\n\tbra.uni done;\n"
      "case_1:\n\tmov.u32 %0, 202;\n\tbra.uni done;\n"
      "case_2:\n\tmov.u32 %0, 303;\n\tbra.uni done;\n"
      "case_3:\n\tmov.u32 %0, 404;\n"
      "done:\n\t}"
      : "=r"(result)
      : "r"(index));
  return result;
}

__global__ void call_through_table(int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  out[i] = operations[i % 4](i, 7) * 1000 + indexed_branch(i / 4);
}

__device__ __noinline__ void leave_if(bool condition) {
  if (condition) asm volatile("exit;");
}

// Threads with threadIdx.x % 3 == 1 exit; the others count themselves after a barrier.
__global__ void exit_before_barrier(int* out) {
  __shared__ int count;
  if (threadIdx.x == 0) count = 0;
  __syncthreads();
  leave_if(threadIdx.x % 3 == 1);
  atomicAdd(&count, 1);
  __syncthreads();
  out[blockIdx.x * blockDim.x + threadIdx.x] = count;
}

__device__ __noinline__ void trap_if(bool condition) {
  if (condition) __trap();
}

__global__ void trap_in_function(int* out) {
  trap_if(threadIdx.x == 5);
  out[threadIdx.x] = 1;
}

int main() {
  const int blocks = 6, threads = 96, n = blocks * threads - 10;
  char* storage;
  int* out;
  CHECK(cudaMalloc(&storage, blocks * threads * slot_bytes));
  CHECK(cudaMalloc(&out, blocks * threads * sizeof(int)));

  build<<<blocks, threads>>>(storage, blocks * threads);
  CHECK_LAUNCH();
  use_shapes<<<blocks, threads>>>(storage, out, n);
  CHECK_LAUNCH();
  std::vector<int> got(blocks * threads);
  CHECK(cudaMemcpy(got.data(), out, n * sizeof(int), cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i) {
    int block = i / threads, size = i % 17, total = 0;
    for (int k = block * threads; k < (block + 1) * threads; ++k) total += k % 5;
    int area = block % 3 == 0 ? size * size : block % 3 == 1 ? size * size / 2 : 3 * size * size;
    int corners = block % 3 == 0 ? 4 : block % 3 == 1 ? 3 : 0;
    if (block % 3 == 1) total = -total;
    int want = area * 10 + corners + total * 1000;
    if (got[i] != want) FAIL("use_shapes[%d]: expected %d, got %d", i, want, got[i]);
  }

  CHECK(cudaMemset(out, 0xFF, blocks * threads * sizeof(int)));
  call_through_table<<<blocks, threads>>>(out, n);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(got.data(), out, n * sizeof(int), cudaMemcpyDeviceToHost));
  const int branch_results[4] = {101, 202, 303, 404};
  for (int i = 0; i < n; ++i) {
    int want = -1;  // quit exits before the store
    if (i % 4 == 0) want = (i + 7) * 1000 + branch_results[(i / 4) % 4];
    if (i % 4 == 1) want = (i - 7) * 1000 + branch_results[(i / 4) % 4];
    if (i % 4 == 2) want = (i * 7) * 1000 + branch_results[(i / 4) % 4];
    if (got[i] != want) FAIL("call_through_table[%d]: expected %d, got %d", i, want, got[i]);
  }

  CHECK(cudaMemset(out, 0xFF, blocks * threads * sizeof(int)));
  exit_before_barrier<<<blocks, threads>>>(out);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(got.data(), out, blocks * threads * sizeof(int), cudaMemcpyDeviceToHost));
  for (int i = 0; i < blocks * threads; ++i) {
    int want = i % threads % 3 == 1 ? -1 : threads - threads / 3;
    if (got[i] != want) FAIL("exit_before_barrier[%d]: expected %d, got %d", i, want, got[i]);
  }

  trap_in_function<<<1, 32>>>(out);
  CHECK(cudaGetLastError());
  cudaError_t trapped = cudaDeviceSynchronize();
  if (trapped != cudaErrorLaunchFailure)
    FAIL("trap_in_function: synchronize gave %s, want cudaErrorLaunchFailure", cudaGetErrorName(trapped));
  std::printf("indirect_calls: virtual calls, function-pointer table, brx.idx, exit and trap in functions ok\n");
  return 0;
}
