// Training metrics written as CSV, JSON and an SVG plot of the curves.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <tuple>

#include "edgewise/gnn/train/trainer.hpp"
#include "edgewise/kernels/common/check.hpp"

namespace edgewise::gnn {

namespace {

// Writes `text` to `path` whole; throws naming the path when any part fails.
void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  if (!out) throw std::runtime_error("cannot write '" + path + "': " + std::strerror(errno));
  out << text;
  out.close();
  if (!out) throw std::runtime_error("writing '" + path + "' failed: " + std::strerror(errno));
}

// Text for SVG character data and attribute values.
std::string xml_escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default: out += c;
    }
  }
  return out;
}

}  // namespace

void check_writable_file(const std::string& path) {
  EW_REQUIRE(!path.empty(), "cannot write '': the path is empty");
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  EW_REQUIRE(!std::filesystem::is_directory(status), "cannot write '", path, "': it is a directory");
  const bool existed = std::filesystem::exists(status);
  // Appending creates a missing file but never truncates an existing one.
  std::FILE* f = std::fopen(path.c_str(), "ab");
  if (f == nullptr) detail::throw_invalid_argument("cannot write '", path, "': ", std::strerror(errno));
  std::fclose(f);
  if (!existed) std::filesystem::remove(path, ec);
}

void write_metrics_csv(const std::string& path, const std::vector<EpochRecord>& history) {
  std::ostringstream out;
  out << "epoch,loss,train_acc,valid_acc,valid_loss,test_acc,epoch_ms\n";
  for (const EpochRecord& r : history) {
    out << r.epoch << ',' << r.loss << ',' << r.train_acc << ',' << r.valid_acc << ',' << r.valid_loss << ','
        << r.test_acc << ',' << r.epoch_ms << '\n';
  }
  write_file(path, out.str());
}

void write_metrics_json(const std::string& path, const TrainResult& result) {
  // nlohmann writes NaN and infinities as null.
  nlohmann::ordered_json history = nlohmann::ordered_json::array();
  for (const EpochRecord& r : result.history) {
    history.push_back({{"epoch", r.epoch},
                       {"loss", r.loss},
                       {"train_acc", r.train_acc},
                       {"valid_acc", r.valid_acc},
                       {"valid_loss", r.valid_loss},
                       {"test_acc", r.test_acc},
                       {"epoch_ms", r.epoch_ms}});
  }
  const nlohmann::ordered_json json = {{"best_epoch", result.best_epoch},
                                       {"best_valid_acc", result.best_valid_acc},
                                       {"test_acc", result.test_acc},
                                       {"train_acc", result.train_acc},
                                       {"epoch_ms_median", result.epoch_ms_median},
                                       {"total_seconds", result.total_seconds},
                                       {"stopped_early", result.stopped_early},
                                       {"history", history}};
  write_file(path, json.dump() + "\n");
}

void write_training_curves_svg(const std::string& path, const std::vector<EpochRecord>& history,
                               const std::string& title) {
  // Two panels: loss (train, valid) on the left; accuracy (train, valid, test) on the right.
  const double W = 900, H = 360, pad = 50, gap = 60;
  const double pw = (W - 2 * pad - gap) / 2, ph = H - 2 * pad;
  const double n = std::max<double>(1, static_cast<double>(history.size()));
  double max_loss = 1e-9;  // non-finite losses are left out of the scale and the curves
  for (const EpochRecord& r : history) {
    for (double v : {r.loss, r.valid_loss})
      if (std::isfinite(v)) max_loss = std::max(max_loss, v);
  }
  std::ostringstream svg;
  svg << "<svg xmlns='http://www.w3.org/2000/svg' width='" << W << "' height='" << H
      << "' font-family='sans-serif' font-size='12'>\n<rect width='100%' height='100%' fill='white'/>\n";
  svg << "<text x='" << W / 2 << "' y='20' text-anchor='middle' font-size='14'>" << xml_escape(title)
      << " — training curves</text>\n";
  auto panel = [&](double x0, const char* name, double ymax, auto&& series) {
    svg << "<rect x='" << x0 << "' y='" << pad << "' width='" << pw << "' height='" << ph
        << "' fill='none' stroke='#888'/>\n";
    svg << "<text x='" << x0 + pw / 2 << "' y='" << H - 12 << "' text-anchor='middle'>epoch (1.." << history.size()
        << ")</text>\n<text x='" << x0 << "' y='" << pad - 8 << "'>" << name << " (0.." << ymax << ")</text>\n";
    int legend = 0;
    for (auto& [label, color, value] : series) {
      svg << "<polyline fill='none' stroke='" << color << "' stroke-width='1.5' points='";
      for (size_t i = 0; i < history.size(); ++i) {
        if (!std::isfinite(value(history[i]))) continue;
        const double x = x0 + pw * (static_cast<double>(i) + 0.5) / n;
        const double y = pad + ph * (1.0 - std::clamp(value(history[i]) / ymax, 0.0, 1.0));
        svg << x << ',' << y << ' ';
      }
      svg << "'/>\n<text x='" << x0 + pw - 110 << "' y='" << pad + 16 + 16 * legend++ << "' fill='" << color << "'>"
          << label << "</text>\n";
    }
  };
  using Series = std::tuple<const char*, const char*, std::function<double(const EpochRecord&)>>;
  std::vector<Series> losses = {{"train loss", "#1f77b4", [](const EpochRecord& r) { return r.loss; }},
                                {"valid loss", "#ff7f0e", [](const EpochRecord& r) { return r.valid_loss; }}};
  std::vector<Series> accs = {{"train acc", "#1f77b4", [](const EpochRecord& r) { return r.train_acc; }},
                              {"valid acc", "#ff7f0e", [](const EpochRecord& r) { return r.valid_acc; }},
                              {"test acc", "#2ca02c", [](const EpochRecord& r) { return r.test_acc; }}};
  panel(pad, "loss", max_loss, losses);
  panel(pad + pw + gap, "accuracy", 1.0, accs);
  svg << "</svg>\n";
  write_file(path, svg.str());
}

}  // namespace edgewise::gnn
