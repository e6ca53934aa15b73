#include "animation.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>

namespace {

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

/// Single quotes for the shell (file names with spaces or quotes).
std::string quoted(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

struct Tool {
  const char* command;
  const char* package;
};

Tool tool_for(const std::string& path) {
  if (ends_with(path, ".gif")) return {"convert", "imagemagick"};
  if (ends_with(path, ".mp4")) return {"ffmpeg", "ffmpeg"};
  throw std::runtime_error("animation '" + path + "': the name must end in .gif (ImageMagick) or .mp4 (ffmpeg)");
}

}  // namespace

void check_animation_tool(const std::string& path) {
  const Tool tool = tool_for(path);
  if (std::system((std::string("command -v ") + tool.command + " > /dev/null 2>&1").c_str()) != 0) {
    throw std::runtime_error(std::string("animation '") + path + "' needs " + tool.command + " (Debian package " +
                             tool.package + "), which is not installed");
  }
}

void write_animation(const std::vector<std::string>& frames, const std::string& path, int frames_per_second) {
  check_animation_tool(path);
  if (frames.empty()) throw std::runtime_error("animation '" + path + "': no frames");
  std::string command;
  if (ends_with(path, ".gif")) {
    command = "convert -delay " + std::to_string(100 / frames_per_second) + " -loop 0";
    for (const std::string& f : frames) command += " " + quoted(f);
    command += " " + quoted(path);
  } else {
    // ffmpeg reads a list of files through its concat demuxer.
    command = "printf \"file '%s'\\n\"";
    for (const std::string& f : frames) command += " " + quoted(f);
    command += " | ffmpeg -loglevel error -y -f concat -safe 0 -r " + std::to_string(frames_per_second) +
               " -i - -pix_fmt yuv420p -vf 'scale=trunc(iw/2)*2:trunc(ih/2)*2' " + quoted(path);
  }
  if (std::system(command.c_str()) != 0)
    throw std::runtime_error("animation '" + path + "': the command failed: " + command);
}

RunArguments parse_run_arguments(const std::string& program, int argc, char* argv[], RunArguments a, int min_n,
                                 int default_frames, const std::string& what) {
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag.rfind("--kokkos-", 0) == 0) continue;
    if (flag == "--help" || flag == "-h") {
      std::printf(
          "usage: %s [--n N] [--steps S] [--frames K] [--png FILE] [--gif FILE]\n"
          "  --n N       N x N grid, %d <= N <= 65536 (default %d)\n"
          "  --steps S   time steps (default %d)\n"
          "  --frames K  K frames over the run, written beside --gif (default 0; %d with --gif)\n"
          "  --png FILE  the final %s (default %s)\n"
          "  --gif FILE  the frames as an animation (.gif: ImageMagick, .mp4: ffmpeg)\n",
          program.c_str(), min_n, a.n, a.steps, default_frames, what.c_str(), a.png.c_str());
      std::exit(0);
    }
    if (i + 1 >= argc) throw std::runtime_error(program + ": " + flag + " needs a value");
    const std::string value = argv[++i];
    auto number             = [&](long lo, long hi) {
      char* end    = nullptr;
      const long v = std::strtol(value.c_str(), &end, 10);
      if (value.empty() || *end || v < lo || v > hi) {
        throw std::runtime_error(program + ": " + flag + " expects an integer from " + std::to_string(lo) + " to " +
                                             std::to_string(hi) + ", got '" + value + "'");
      }
      return static_cast<int>(v);
    };
    if (flag == "--n") a.n = number(min_n, 65536);
    else if (flag == "--steps") a.steps = number(1, 100000000);
    else if (flag == "--frames") a.frames = number(0, 10000);
    else if (flag == "--png") a.png = value;
    else if (flag == "--gif") a.gif = value;
    else throw std::runtime_error(program + ": unknown option '" + flag + "' (try --help)");
  }
  if (!a.gif.empty()) {
    check_animation_tool(a.gif);
    if (a.frames == 0) a.frames = default_frames;
  }
  return a;
}

FrameRecorder::FrameRecorder(const RunArguments& args) : m_args(args) {
  if (m_args.frames == 0) return;
  std::filesystem::path dir = m_args.gif.empty() ? std::filesystem::path("frames") : std::filesystem::path(m_args.gif);
  dir.replace_extension("");
  m_dir = dir.string() + "_frames";
  std::filesystem::create_directories(m_dir);
}

std::string FrameRecorder::frame_for(int step) {
  const int every = std::max(1, m_args.steps / std::max(1, m_args.frames));
  if (m_args.frames == 0 || step % every != 0 || static_cast<int>(m_frames.size()) >= m_args.frames) return {};
  char name[32];
  std::snprintf(name, sizeof name, "frame_%05d.png", static_cast<int>(m_frames.size()));
  m_frames.push_back((std::filesystem::path(m_dir) / name).string());
  return m_frames.back();
}

std::string FrameRecorder::finish() const {
  if (m_args.gif.empty()) return {};
  write_animation(m_frames, m_args.gif);
  return "wrote " + m_args.gif + " (" + std::to_string(m_frames.size()) + " frames in " + m_dir + ")";
}
