#pragma once
#include <string>
#include <vector>

/// Joins PNG frames into an animation with a Debian tool: `path` ending in .gif through
/// ImageMagick's convert, in .mp4 through ffmpeg. Throws std::runtime_error naming the tool
/// (and its Debian package) when it is missing or fails.
void write_animation(const std::vector<std::string>& frames, const std::string& path, int frames_per_second = 15);

/// Throws now, not after a simulation, when the tool `path` needs is missing or the
/// extension is neither .gif nor .mp4.
void check_animation_tool(const std::string& path);

/// The command line of the field-update examples: --n N, --steps S, --frames K, --png FILE,
/// --gif FILE (Kokkos' --kokkos-* options are left to Kokkos).
struct RunArguments {
  int n = 0, steps = 0, frames = 0;
  std::string png, gif;
};

/// Parses argv over `defaults`; --help prints the usage (`what`: the field the images show)
/// and exits. Throws std::runtime_error naming the flag at fault, or the missing animation
/// tool. With --gif and no --frames, `default_frames` frames.
RunArguments parse_run_arguments(const std::string& program, int argc, char* argv[], RunArguments defaults, int min_n,
                                 int default_frames, const std::string& what);

/// The frames of a run: due every steps / frames steps, written beside the animation
/// (FILE without its extension, then _frames/), joined at the end.
class FrameRecorder {
 public:
  explicit FrameRecorder(const RunArguments& args);
  /// The path for this step's frame, or empty when none is due.
  std::string frame_for(int step);
  /// Joins the frames into the animation; returns a line saying what was written.
  std::string finish() const;

 private:
  RunArguments m_args;
  std::string m_dir;
  std::vector<std::string> m_frames;
};
