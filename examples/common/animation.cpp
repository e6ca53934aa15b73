#include "animation.hpp"

#include <cstdlib>
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
  if (std::system(command.c_str()) != 0) throw std::runtime_error("animation '" + path + "': the command failed: " + command);
}
