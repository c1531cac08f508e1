// Matrices in host memory posing as a Source, a Sink or an InplaceMatrix, so
// the engines that move files tile by tile move a program's own arrays too
// (the host-memory API, host.hpp, is built on these).
//
// read() and write() are rectangle copies (one memcpy per row, or one for the
// whole rectangle when both sides are contiguous), safe from several threads
// at once on disjoint rectangles. host_view() hands the array itself to an
// engine that can use it directly (the CUDA engine DMAs pinned memory).
// Nothing here owns memory: the array must outlive the object.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>

#include "gtranspose/format.hpp"
#include "gtranspose/types.hpp"

namespace gt {

// What is known about the memory behind a matrix: page-locked and registered
// with CUDA (is_pinned_host() in cuda.hpp), ordinary pageable memory, or not
// asked (the CPU engine has no use for the answer, and asking CUDA would
// start a CUDA context). Only `pinned` sets HostView::pinned.
enum class HostMemoryKind { unchecked, pageable, pinned };

// A matrix in host memory: element (i, j) at data + (i*ld + j)*elem_size.
struct HostMatrix {
  void* data = nullptr;
  Shape shape;                 // rows x cols
  std::size_t elem_size = 0;   // 1, 2, 4, 8 or 16
  std::uint64_t ld = 0;        // elements from one row to the next (0: cols)
  HostMemoryKind memory = HostMemoryKind::unchecked;
};

// Bytes from m's first element to one past its last, ((rows-1)*ld + cols) *
// elem_size (ld 0 taken as cols): the address range the matrix touches.
// Throws gt::Error(usage) when it overflows 64 bits.
std::uint64_t host_matrix_span(const HostMatrix& m);

// Each factory checks the matrix (non-null data, non-zero shape, supported
// element size, ld >= cols, extent within 64 bits) and throws gt::Error(usage)
// otherwise. A rectangle outside the matrix in read()/write() is a bug in the
// caller: gt::Error(internal), as for the file formats.
//
// The source reads `m` (which it never writes, whatever data's constness).
[[nodiscard]] std::unique_ptr<Source> memory_source(const HostMatrix& m);
// The sink is written as `m`, the transposed shape of its source: m.shape is
// the sink's info().shape. commit() does nothing (nothing to rename).
[[nodiscard]] std::unique_ptr<Sink> memory_sink(const HostMatrix& m);
// A square matrix (rows == cols, else gt::Error(usage)); flush() does nothing.
[[nodiscard]] std::unique_ptr<InplaceMatrix> memory_inplace(const HostMatrix& m);

}  // namespace gt
