// sured and istypep through inline PTX. 1024 threads reduce into the 8 elements of a 1d surface
// with every pair of operation and type the PTX ISA lists for sured.b (a byte column) and
// sured.p (an element column, signed or not as the surface's format is); a 2d and a 3d surface
// add up many threads' values. The expected values are the ISA's definitions computed in
// order on the host, which only atomic reductions reproduce. Out-of-range columns and rows
// under .clamp and .zero, the launch errors of .trap and of misaligned columns (each in a child
// process, since a fault ends the context), and istypep's answers are as an H200 gave them.
#include "check.h"

#include <cstdint>
#include <cstring>
#include <vector>

static void expect(const char* what, int index, unsigned long long got, unsigned long long want) {
  if (got != want) {
    std::fprintf(stderr, "%s [%d]: expected %#llx, got %#llx\n", what, index, want, got);
    ++failures;
  }
}

constexpr int width = 8;
constexpr int blocks = 4, threads = 256;

enum class Form {
  add_u32,
  add_s32,
  min_u32,
  max_u32,
  min_s32,
  max_s32,
  and_b32,
  or_b32,
  element_add,
  element_min,
  element_max,
  element_and,
  element_or,
  add_u64,
  min_u64,
  max_u64,
  min_s64,
  max_s64,
  element_min_64,
  element_max_64,
};

struct FormInfo {
  Form form;
  const char* name;
  bool wide;
  bool is_signed;  // of the operation, or of the surface's format for sured.p
};

constexpr FormInfo forms[] = {
    {Form::add_u32, "sured.b.add.u32", false, false},
    {Form::add_s32, "sured.b.add.s32", false, true},
    {Form::min_u32, "sured.b.min.u32", false, false},
    {Form::max_u32, "sured.b.max.u32", false, false},
    {Form::min_s32, "sured.b.min.s32", false, true},
    {Form::max_s32, "sured.b.max.s32", false, true},
    {Form::and_b32, "sured.b.and.b32", false, false},
    {Form::or_b32, "sured.b.or.b32", false, false},
    {Form::element_add, "sured.p.add.b32", false, false},
    {Form::element_min, "sured.p.min.b32 (uint)", false, false},
    {Form::element_min, "sured.p.min.b32 (int)", false, true},
    {Form::element_max, "sured.p.max.b32 (uint)", false, false},
    {Form::element_max, "sured.p.max.b32 (int)", false, true},
    {Form::element_and, "sured.p.and.b32", false, false},
    {Form::element_or, "sured.p.or.b32", false, true},
    {Form::add_u64, "sured.b.add.u64", true, false},
    {Form::min_u64, "sured.b.min.u64", true, false},
    {Form::max_u64, "sured.b.max.u64", true, false},
    {Form::min_s64, "sured.b.min.s64", true, true},
    {Form::max_s64, "sured.b.max.s64", true, true},
    {Form::element_min_64, "sured.p.min.b64 (uint2)", true, false},
    {Form::element_min_64, "sured.p.min.b64 (int2)", true, true},
    {Form::element_max_64, "sured.p.max.b64 (uint2)", true, false},
    {Form::element_max_64, "sured.p.max.b64 (int2)", true, true},
};

// Thread t's operand: scattered bits for add, min and max (negative ones too, as signed
// values); for and and or, bits that differ between the threads of an element.
__host__ __device__ unsigned long long operand(Form form, unsigned t) {
  unsigned bit = t % width + 8 * (t / width % 3);
  switch (form) {
    case Form::and_b32:
    case Form::element_and: return ~(1u << bit);
    case Form::or_b32:
    case Form::element_or: return 1u << bit;
    default: return static_cast<unsigned long long>(t) * 0x9E3779B97F4A7C15ull >> (t % 3 * 7);
  }
}

unsigned long long initial(int element) {
  return 0x8000000180000001ull * static_cast<unsigned>(element + 3) ^ 0x5a5a5a5a5a5a5a5aull;
}

// One sured at column `column` with `operand` of the constraint that fits its type.
#define SURED(instruction, column, constraint, operand)                                        \
  asm volatile(instruction " [%0, {%1}], %2;" ::"l"(surface), "r"(column), constraint(operand) \
               : "memory")

__global__ void reduce(cudaSurfaceObject_t surface, Form form) {
  unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  int element = static_cast<int>(t % width);
  unsigned long long value = operand(form, t);
  auto narrow = static_cast<unsigned>(value);
  int x = element * 4, x_wide = element * 8;
  switch (form) {
    case Form::add_u32: SURED("sured.b.add.1d.trap.u32", x, "r", narrow); break;
    case Form::add_s32:
      asm volatile("sured.b.add.1d.zero.s32 [%0, %1], %2;" ::"l"(surface), "r"(x), "r"(narrow)
                   : "memory");
      break;
    case Form::min_u32: SURED("sured.b.min.1d.clamp.u32", x, "r", narrow); break;
    case Form::max_u32: SURED("sured.b.max.1d.trap.u32", x, "r", narrow); break;
    case Form::min_s32: SURED("sured.b.min.1d.trap.s32", x, "r", narrow); break;
    case Form::max_s32: SURED("sured.b.max.1d.trap.s32", x, "r", narrow); break;
    case Form::and_b32: SURED("sured.b.and.1d.trap.b32", x, "r", narrow); break;
    case Form::or_b32: SURED("sured.b.or.1d.trap.b32", x, "r", narrow); break;
    case Form::element_add: SURED("sured.p.add.1d.trap.b32", element, "r", narrow); break;
    case Form::element_min: SURED("sured.p.min.1d.trap.b32", element, "r", narrow); break;
    case Form::element_max: SURED("sured.p.max.1d.trap.b32", element, "r", narrow); break;
    case Form::element_and: SURED("sured.p.and.1d.trap.b32", element, "r", narrow); break;
    case Form::element_or: SURED("sured.p.or.1d.trap.b32", element, "r", narrow); break;
    case Form::add_u64: SURED("sured.b.add.1d.trap.u64", x_wide, "l", value); break;
    case Form::min_u64: SURED("sured.b.min.1d.trap.u64", x_wide, "l", value); break;
    case Form::max_u64: SURED("sured.b.max.1d.trap.u64", x_wide, "l", value); break;
    case Form::min_s64: SURED("sured.b.min.1d.trap.s64", x_wide, "l", value); break;
    case Form::max_s64: SURED("sured.b.max.1d.trap.s64", x_wide, "l", value); break;
    case Form::element_min_64: SURED("sured.p.min.1d.trap.b64", element, "l", value); break;
    case Form::element_max_64: SURED("sured.p.max.1d.trap.b64", element, "l", value); break;
  }
}

// The PTX ISA's definition of the reduction, on 32 or 64 bits.
unsigned long long combine(const FormInfo& info, unsigned long long current,
                           unsigned long long value) {
  unsigned long long mask = info.wide ? ~0ull : 0xffffffffull;
  current &= mask;
  value &= mask;
  int bits = info.wide ? 64 : 32;
  auto as_signed = [&](unsigned long long v) {
    return bits == 64 ? static_cast<long long>(v) : static_cast<long long>(static_cast<int>(v));
  };
  auto less = [&](unsigned long long a, unsigned long long b) {
    return info.is_signed ? as_signed(a) < as_signed(b) : a < b;
  };
  switch (info.form) {
    case Form::add_u32:
    case Form::add_s32:
    case Form::element_add:
    case Form::add_u64: return (current + value) & mask;
    case Form::and_b32:
    case Form::element_and: return current & value;
    case Form::or_b32:
    case Form::element_or: return current | value;
    case Form::min_u32:
    case Form::min_s32:
    case Form::element_min:
    case Form::min_u64:
    case Form::min_s64:
    case Form::element_min_64: return less(value, current) ? value : current;
    default: return less(current, value) ? value : current;
  }
}

cudaSurfaceObject_t surface_of(cudaArray_t array) {
  cudaResourceDesc resource{};
  resource.resType = cudaResourceTypeArray;
  resource.res.array.array = array;
  cudaSurfaceObject_t surface = 0;
  CHECK(cudaCreateSurfaceObject(&surface, &resource));
  return surface;
}

void check_forms() {
  for (const FormInfo& info : forms) {
    cudaChannelFormatDesc format =
        info.wide
            ? (info.is_signed ? cudaCreateChannelDesc<int2>() : cudaCreateChannelDesc<uint2>())
            : (info.is_signed ? cudaCreateChannelDesc<int>() : cudaCreateChannelDesc<unsigned>());
    size_t bytes = info.wide ? 8 : 4;
    cudaArray_t array = nullptr;
    CHECK(cudaMallocArray(&array, &format, width, 0, cudaArraySurfaceLoadStore));
    std::vector<unsigned char> data(width * bytes);
    std::vector<unsigned long long> want(width);
    for (int element = 0; element < width; ++element) {
      want[element] = initial(element) & (info.wide ? ~0ull : 0xffffffffull);
      std::memcpy(&data[element * bytes], &want[element], bytes);
    }
    CHECK(cudaMemcpy2DToArray(array, 0, 0, data.data(), width * bytes, width * bytes, 1,
                              cudaMemcpyHostToDevice));
    cudaSurfaceObject_t surface = surface_of(array);
    reduce<<<blocks, threads>>>(surface, info.form);
    CHECK_LAUNCH();
    CHECK(cudaMemcpy2DFromArray(data.data(), width * bytes, array, 0, 0, width * bytes, 1,
                                cudaMemcpyDeviceToHost));
    for (unsigned t = 0; t < blocks * threads; ++t)
      want[t % width] = combine(info, want[t % width], operand(info.form, t));
    for (int element = 0; element < width; ++element) {
      unsigned long long got = 0;
      std::memcpy(&got, &data[element * bytes], bytes);
      expect(info.name, element, got, want[element]);
    }
    CHECK(cudaDestroySurfaceObject(surface));
    CHECK(cudaFreeArray(array));
  }
}

constexpr int plane_width = 6, plane_height = 5, depth = 2;

__global__ void add_2d(cudaSurfaceObject_t surface) {
  unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  int x = t % plane_width, y = t / plane_width % plane_height;
  asm volatile("sured.b.add.2d.zero.u32 [%0, {%1, %2}], %3;" ::"l"(surface), "r"(x * 4), "r"(y),
               "r"(t % 5 + 1)
               : "memory");
}

__global__ void add_3d(cudaSurfaceObject_t surface) {
  unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  int x = t % plane_width, y = t / plane_width % plane_height,
      z = t / (plane_width * plane_height) % depth;
  asm volatile("sured.b.add.3d.clamp.u32 [%0, {%1, %2, %3, %4}], %5;" ::"l"(surface), "r"(x * 4),
               "r"(y), "r"(z), "r"(0), "r"(t % 7 + 1)
               : "memory");
}

void check_2d_and_3d() {
  cudaChannelFormatDesc format = cudaCreateChannelDesc<unsigned>();
  cudaArray_t array = nullptr;
  CHECK(cudaMalloc3DArray(&array, &format, make_cudaExtent(plane_width, plane_height, depth),
                          cudaArraySurfaceLoadStore));
  cudaSurfaceObject_t surface = surface_of(array);
  const int count = plane_width * plane_height * depth;
  std::vector<unsigned> got(count), want(count, 0);
  cudaMemcpy3DParms copy{};
  copy.srcPtr = make_cudaPitchedPtr(want.data(), plane_width * 4, plane_width, plane_height);
  copy.dstArray = array;
  copy.extent = make_cudaExtent(plane_width, plane_height, depth);
  copy.kind = cudaMemcpyHostToDevice;
  CHECK(cudaMemcpy3D(&copy));
  add_3d<<<blocks, threads>>>(surface);
  CHECK_LAUNCH();
  copy = cudaMemcpy3DParms{};
  copy.srcArray = array;
  copy.dstPtr = make_cudaPitchedPtr(got.data(), plane_width * 4, plane_width, plane_height);
  copy.extent = make_cudaExtent(plane_width, plane_height, depth);
  copy.kind = cudaMemcpyDeviceToHost;
  CHECK(cudaMemcpy3D(&copy));
  for (unsigned t = 0; t < blocks * threads; ++t) want[t % count] += t % 7 + 1;
  for (int i = 0; i < count; ++i) expect("sured.b.add.3d", i, got[i], want[i]);
  CHECK(cudaDestroySurfaceObject(surface));
  CHECK(cudaFreeArray(array));

  CHECK(cudaMallocArray(&array, &format, plane_width, plane_height, cudaArraySurfaceLoadStore));
  surface = surface_of(array);
  std::vector<unsigned> plane(plane_width * plane_height, 0);
  CHECK(cudaMemcpy2DToArray(array, 0, 0, plane.data(), plane_width * 4, plane_width * 4,
                            plane_height, cudaMemcpyHostToDevice));
  add_2d<<<3, threads>>>(surface);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy2DFromArray(plane.data(), plane_width * 4, array, 0, 0, plane_width * 4,
                              plane_height, cudaMemcpyDeviceToHost));
  std::vector<unsigned> sums(plane.size(), 0);
  for (unsigned t = 0; t < 3 * threads; ++t) sums[t % plane.size()] += t % 5 + 1;
  for (size_t i = 0; i < plane.size(); ++i)
    expect("sured.b.add.2d", static_cast<int>(i), plane[i], sums[i]);
  CHECK(cudaDestroySurfaceObject(surface));
  CHECK(cudaFreeArray(array));
}

// 64-bit reductions over pairs of 4-byte elements in rows of 3: the pair at column 0 of row 1
// starts 12 bytes into the array's data on xcuda, which lays rows end to end.
__global__ void add_pairs(cudaSurfaceObject_t surface) {
  unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned long long value = 0xffffffffull + t % 3;
  asm volatile("sured.b.add.2d.trap.u64 [%0, {%1, %2}], %3;" ::"l"(surface), "r"(0), "r"(1),
               "l"(value)
               : "memory");
}

void check_pairs() {
  const int columns = 3, rows = 2;
  cudaChannelFormatDesc format = cudaCreateChannelDesc<unsigned>();
  cudaArray_t array = nullptr;
  CHECK(cudaMallocArray(&array, &format, columns, rows, cudaArraySurfaceLoadStore));
  std::vector<unsigned> values(columns * rows, 0);
  CHECK(cudaMemcpy2DToArray(array, 0, 0, values.data(), columns * 4, columns * 4, rows,
                            cudaMemcpyHostToDevice));
  cudaSurfaceObject_t surface = surface_of(array);
  add_pairs<<<blocks, threads>>>(surface);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy2DFromArray(values.data(), columns * 4, array, 0, 0, columns * 4, rows,
                              cudaMemcpyDeviceToHost));
  unsigned long long sum = 0;
  for (unsigned t = 0; t < blocks * threads; ++t) sum += 0xffffffffull + t % 3;
  const unsigned long long want[] = {0, 0, 0, sum & 0xffffffffull, sum >> 32, 0};
  for (int i = 0; i < columns * rows; ++i)
    expect("sured.b.add.u64 on 4-byte elements", i, values[i], want[i]);
  CHECK(cudaDestroySurfaceObject(surface));
  CHECK(cudaFreeArray(array));
}

// One reduction by one thread, to see where an out-of-range one lands.
enum class Edge { clamp_1d, zero_1d, element_clamp, element_zero, clamp_2d, zero_2d };

__global__ void add_at(cudaSurfaceObject_t surface, Edge edge, int x, int y) {
  switch (edge) {
    case Edge::clamp_1d:
      asm volatile("sured.b.add.1d.clamp.u32 [%0, {%1}], %2;" ::"l"(surface), "r"(x), "r"(5)
                   : "memory");
      break;
    case Edge::zero_1d:
      asm volatile("sured.b.add.1d.zero.u32 [%0, {%1}], %2;" ::"l"(surface), "r"(x), "r"(5)
                   : "memory");
      break;
    case Edge::element_clamp:
      asm volatile("sured.p.add.1d.clamp.b32 [%0, {%1}], %2;" ::"l"(surface), "r"(x), "r"(5)
                   : "memory");
      break;
    case Edge::element_zero:
      asm volatile("sured.p.add.1d.zero.b32 [%0, {%1}], %2;" ::"l"(surface), "r"(x), "r"(5)
                   : "memory");
      break;
    case Edge::clamp_2d:
      asm volatile("sured.b.add.2d.clamp.u32 [%0, {%1, %2}], %3;" ::"l"(surface), "r"(x), "r"(y),
                   "r"(5)
                   : "memory");
      break;
    case Edge::zero_2d:
      asm volatile("sured.b.add.2d.zero.u32 [%0, {%1, %2}], %3;" ::"l"(surface), "r"(x), "r"(y),
                   "r"(5)
                   : "memory");
      break;
  }
}

void check_edges() {
  // Where the 5 lands as an H200 put it (-1: nowhere): .clamp moves the access to the nearest
  // element, .zero drops it.
  struct Case {
    Edge edge;
    int x, y;
    int element;
  };
  const Case cases[] = {
      {Edge::clamp_1d, -4, 0, 0},      {Edge::clamp_1d, -1000, 0, 0},
      {Edge::clamp_1d, 32, 0, 7},      {Edge::clamp_1d, 36, 0, 7},
      {Edge::clamp_1d, 1000, 0, 7},    {Edge::clamp_1d, 28, 0, 7},
      {Edge::zero_1d, -4, 0, -1},      {Edge::zero_1d, 32, 0, -1},
      {Edge::zero_1d, 0, 0, 0},        {Edge::element_clamp, -1, 0, 0},
      {Edge::element_clamp, 8, 0, 7},  {Edge::element_clamp, 100, 0, 7},
      {Edge::element_zero, -1, 0, -1}, {Edge::element_zero, 8, 0, -1},
      {Edge::element_zero, 3, 0, 3},   {Edge::clamp_2d, -4, 2, 12},
      {Edge::clamp_2d, 24, 2, 17},     {Edge::clamp_2d, 4, -1, 1},
      {Edge::clamp_2d, 4, 5, 25},      {Edge::clamp_2d, 100, 100, 29},
      {Edge::clamp_2d, -4, -1, 0},     {Edge::zero_2d, -4, 2, -1},
      {Edge::zero_2d, 24, 2, -1},      {Edge::zero_2d, 4, -1, -1},
      {Edge::zero_2d, 4, 5, -1},       {Edge::zero_2d, 20, 4, 29},
  };
  cudaChannelFormatDesc format = cudaCreateChannelDesc<unsigned>();
  cudaArray_t line = nullptr, plane = nullptr;
  CHECK(cudaMallocArray(&line, &format, width, 0, cudaArraySurfaceLoadStore));
  CHECK(cudaMallocArray(&plane, &format, plane_width, plane_height, cudaArraySurfaceLoadStore));
  cudaSurfaceObject_t line_surface = surface_of(line), plane_surface = surface_of(plane);
  int index = 0;
  for (const Case& c : cases) {
    bool planar = c.edge == Edge::clamp_2d || c.edge == Edge::zero_2d;
    int columns = planar ? plane_width : width, rows = planar ? plane_height : 1;
    cudaArray_t array = planar ? plane : line;
    std::vector<unsigned> values(columns * rows, 0);
    CHECK(cudaMemcpy2DToArray(array, 0, 0, values.data(), columns * 4, columns * 4, rows,
                              cudaMemcpyHostToDevice));
    add_at<<<1, 1>>>(planar ? plane_surface : line_surface, c.edge, c.x, c.y);
    CHECK_LAUNCH();
    CHECK(cudaMemcpy2DFromArray(values.data(), columns * 4, array, 0, 0, columns * 4, rows,
                                cudaMemcpyDeviceToHost));
    for (int i = 0; i < columns * rows; ++i)
      expect("out-of-range sured", index * 100 + i, values[i], i == c.element ? 5 : 0);
    ++index;
  }
  CHECK(cudaDestroySurfaceObject(line_surface));
  CHECK(cudaDestroySurfaceObject(plane_surface));
  CHECK(cudaFreeArray(line));
  CHECK(cudaFreeArray(plane));
}

// Faults, each in a child process: .trap outside the surface is an illegal address, and a byte
// column that is not a multiple of the access size a misaligned one, under .clamp and .zero too.
// sured.p's 8 bytes at element 1 of a 4-byte format are no fault on an H200.
enum class Fault {
  trap_outside,
  misaligned,
  misaligned_clamped,
  misaligned_dropped,
  misaligned_elements
};

__global__ void fault(cudaSurfaceObject_t surface, Fault which) {
  unsigned long long one = 1;
  switch (which) {
    case Fault::trap_outside:
      asm volatile("sured.b.add.1d.trap.u32 [%0, {%1}], %2;" ::"l"(surface), "r"(32), "r"(1)
                   : "memory");
      break;
    case Fault::misaligned:
      asm volatile("sured.b.add.1d.trap.u32 [%0, {%1}], %2;" ::"l"(surface), "r"(6), "r"(1)
                   : "memory");
      break;
    case Fault::misaligned_clamped:
      asm volatile("sured.b.add.1d.clamp.u64 [%0, {%1}], %2;" ::"l"(surface), "r"(28), "l"(one)
                   : "memory");
      break;
    case Fault::misaligned_dropped:
      asm volatile("sured.b.add.1d.zero.u32 [%0, {%1}], %2;" ::"l"(surface), "r"(34), "r"(1)
                   : "memory");
      break;
    case Fault::misaligned_elements:
      asm volatile("sured.p.max.1d.trap.b64 [%0, {%1}], %2;" ::"l"(surface), "r"(1), "l"(one)
                   : "memory");
      break;
  }
}

int run_fault(Fault which, cudaError_t want) {
  cudaChannelFormatDesc format = cudaCreateChannelDesc<unsigned>();
  cudaArray_t array = nullptr;
  CHECK(cudaMallocArray(&array, &format, width, 0, cudaArraySurfaceLoadStore));
  fault<<<1, 1>>>(surface_of(array), which);
  CHECK(cudaGetLastError());
  cudaError_t got = cudaDeviceSynchronize();
  if (got != want)
    FAIL("fault %d: synchronize gave %s, want %s", static_cast<int>(which), cudaGetErrorName(got),
         cudaGetErrorName(want));
  return 0;
}

void check_faults() {
  struct Case {
    Fault which;
    cudaError_t want;
  };
  const Case cases[] = {
      {Fault::trap_outside, cudaErrorIllegalAddress},
      {Fault::misaligned, cudaErrorMisalignedAddress},
      {Fault::misaligned_clamped, cudaErrorMisalignedAddress},
      {Fault::misaligned_dropped, cudaErrorMisalignedAddress},
      {Fault::misaligned_elements, cudaSuccess},
  };
  for (const Case& c : cases)
    if (!succeeds_in_child([&c] { return run_fault(c.which, c.want); })) {
      std::fprintf(stderr, "fault %d: the child process failed\n", static_cast<int>(c.which));
      ++failures;
    }
}

__device__ unsigned kinds(unsigned long long handle) {
  unsigned texture, sampler, surface;
  asm("{\n\t.reg .pred p;\n\tistypep.texref p, %1;\n\tselp.u32 %0, 1, 0, p;\n\t}"
      : "=r"(texture)
      : "l"(handle));
  asm("{\n\t.reg .pred p;\n\tistypep.samplerref p, %1;\n\tselp.u32 %0, 1, 0, p;\n\t}"
      : "=r"(sampler)
      : "l"(handle));
  asm("{\n\t.reg .pred p;\n\tistypep.surfref p, %1;\n\tselp.u32 %0, 1, 0, p;\n\t}"
      : "=r"(surface)
      : "l"(handle));
  return texture | sampler << 1 | surface << 2;
}

__global__ void ask_kinds(const unsigned long long* handles, unsigned* answers, int count) {
  int i = static_cast<int>(threadIdx.x);
  if (i < count) answers[i] = kinds(handles[i]);
}

// istypep: an H200 calls no texture or surface object a .texref, .samplerref or .surfref; ptxas
// makes it a test of bit 61 (texref), 62 (samplerref) or 63 (surfref) of any value.
void check_kinds() {
  cudaChannelFormatDesc format = cudaCreateChannelDesc<float>();
  cudaArray_t array = nullptr;
  CHECK(cudaMallocArray(&array, &format, width, 0, cudaArraySurfaceLoadStore));
  cudaResourceDesc resource{};
  resource.resType = cudaResourceTypeArray;
  resource.res.array.array = array;
  cudaTextureDesc sampler{};
  cudaTextureObject_t texture = 0;
  CHECK(cudaCreateTextureObject(&texture, &resource, &sampler, nullptr));
  cudaSurfaceObject_t surface = surface_of(array);
  struct Case {
    unsigned long long handle;
    unsigned kinds;  // bit 0 texref, 1 samplerref, 2 surfref
  };
  std::vector<Case> cases = {
      {texture, 0},
      {surface, 0},
      {0, 0},
      {1, 0},
      {0x12345678, 0},
      {0x00007f0000000000ull, 0},
      {0xdeadbeefcafef00dull, 6},
      {~0ull, 7},
      {1ull << 63, 4},
      {1ull << 62, 2},
      {1ull << 61, 1},
      {1ull << 60, 0},
      {0xa000000000000000ull, 5},
      {0x6000000000000001ull, 3},
  };
  std::vector<unsigned long long> handles;
  for (const Case& c : cases) handles.push_back(c.handle);
  unsigned long long* device_handles = nullptr;
  unsigned* answers = nullptr;
  CHECK(cudaMalloc(&device_handles, handles.size() * sizeof(unsigned long long)));
  CHECK(cudaMalloc(&answers, handles.size() * sizeof(unsigned)));
  CHECK(cudaMemcpy(device_handles, handles.data(), handles.size() * sizeof(unsigned long long),
                   cudaMemcpyHostToDevice));
  ask_kinds<<<1, 32>>>(device_handles, answers, static_cast<int>(handles.size()));
  CHECK_LAUNCH();
  std::vector<unsigned> got(handles.size());
  CHECK(cudaMemcpy(got.data(), answers, got.size() * sizeof(unsigned), cudaMemcpyDeviceToHost));
  for (size_t i = 0; i < cases.size(); ++i)
    expect("istypep", static_cast<int>(i), got[i], cases[i].kinds);
  CHECK(cudaDestroyTextureObject(texture));
  CHECK(cudaDestroySurfaceObject(surface));
  CHECK(cudaFree(device_handles));
  CHECK(cudaFree(answers));
  CHECK(cudaFreeArray(array));
}

int main() {
  check_faults();
  check_forms();
  check_2d_and_3d();
  check_pairs();
  check_edges();
  check_kinds();
  if (failures) FAIL("%d sured or istypep results differ from the H200's", failures);
  std::printf("surface_reduction: sured and istypep as on an H200\n");
  return 0;
}
