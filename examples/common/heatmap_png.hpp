#pragma once
#include <string>
#include <vector>

/// Writes `values` (rows x cols, row-major) as an 8-bit RGB PNG through a blue-to-yellow
/// colour map spanning [lo, hi], box-averaged down to at most `max_side` pixels a side.
/// Throws std::runtime_error when the file cannot be written.
void write_heatmap_png(const std::string& path, const std::vector<double>& values, int rows, int cols, double lo,
                       double hi, int max_side = 1024);
