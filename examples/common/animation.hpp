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
