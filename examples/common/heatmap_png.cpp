#include "heatmap_png.hpp"

#include <png.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <memory>
#include <stdexcept>

namespace {

/// A perceptually ordered ramp: dark blue, purple, orange, pale yellow.
std::array<unsigned char, 3> colour(double t) {
  static const double stops[5][3] = {{13, 8, 135}, {126, 3, 168}, {204, 71, 120}, {248, 149, 64}, {240, 249, 33}};
  t                               = std::clamp(t, 0.0, 1.0) * 4.0;
  const int k                     = std::min(static_cast<int>(t), 3);
  const double f                  = t - k;
  std::array<unsigned char, 3> rgb{};
  for (int c = 0; c < 3; ++c) rgb[c] = static_cast<unsigned char>(stops[k][c] + f * (stops[k + 1][c] - stops[k][c]));
  return rgb;
}

}  // namespace

void write_heatmap_png(const std::string& path, const std::vector<double>& values, int rows, int cols, double lo,
                       double hi, int max_side) {
  const int factor = std::max(1, (std::max(rows, cols) + max_side - 1) / max_side);
  const int height = rows / factor, width = cols / factor;
  std::unique_ptr<FILE, int (*)(FILE*)> file(std::fopen(path.c_str(), "wb"), &std::fclose);
  if (!file) throw std::runtime_error("write_heatmap_png: cannot open '" + path + "' for writing");
  std::vector<unsigned char> row(3 * static_cast<std::size_t>(width));  // before setjmp
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  png_infop info  = png ? png_create_info_struct(png) : nullptr;
  if (!info) {
    png_destroy_write_struct(&png, nullptr);
    throw std::runtime_error("write_heatmap_png: libpng initialisation failed");
  }
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    throw std::runtime_error("write_heatmap_png: libpng failed writing '" + path + "'");
  }
  png_init_io(png, file.get());
  png_set_IHDR(png, info, width, height, 8, PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
               PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      double sum = 0;
      for (int dy = 0; dy < factor; ++dy)
        for (int dx = 0; dx < factor; ++dx)
          sum += values[static_cast<std::size_t>(y * factor + dy) * cols + (x * factor + dx)];
      const auto rgb = colour((sum / (factor * factor) - lo) / (hi - lo));
      std::copy(rgb.begin(), rgb.end(), row.begin() + 3 * x);
    }
    png_write_row(png, row.data());
  }
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
}
