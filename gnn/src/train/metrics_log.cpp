// Training metrics written as CSV, JSON and an SVG plot of the curves.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

#include "edgewise/gnn/train/train_options.hpp"
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
  const std::vector<std::string> names = metric_names(history);
  std::ostringstream out;
  out << "epoch,loss";
  for (const std::string& name : names) out << ',' << name;
  out << ",lr,epoch_ms\n";
  for (const EpochRecord& r : history) {
    out << r.epoch << ',' << r.loss;
    for (const std::string& name : names) {
      out << ',';
      if (r.metrics.has(name)) out << r.metric(name);  // empty: not evaluated that epoch
    }
    out << ',' << r.lr << ',' << r.epoch_ms << '\n';
  }
  write_file(path, out.str());
}

void write_metrics_json(const std::string& path, const TrainResult& result) {
  // nlohmann writes NaN and infinities as null.
  nlohmann::ordered_json history = nlohmann::ordered_json::array();
  for (const EpochRecord& r : result.history) {
    nlohmann::ordered_json rec = {{"epoch", r.epoch}, {"loss", r.loss}};
    for (const auto& [name, value] : r.metrics.items()) rec[name] = value;
    rec["lr"] = r.lr;
    rec["epoch_ms"] = r.epoch_ms;
    history.push_back(std::move(rec));
  }
  nlohmann::ordered_json best = nlohmann::ordered_json::object();
  for (const auto& [name, value] : result.best.items()) best[name] = value;
  nlohmann::ordered_json json = {{"best_epoch", result.best_epoch}};
  // The classification names at the top level, as before the metrics were named.
  if (result.best.has("valid_acc")) json["best_valid_acc"] = result.best_valid_acc;
  if (result.best.has("test_acc")) json["test_acc"] = result.test_acc;
  if (result.best.has("train_acc")) json["train_acc"] = result.train_acc;
  json["best"] = best;
  json["epoch_ms_median"] = result.epoch_ms_median;
  json["total_seconds"] = result.total_seconds;
  json["stopped_early"] = result.stopped_early;
  json["history"] = history;
  write_file(path, json.dump() + "\n");
}

void write_training_curves_svg(const std::string& path, const std::vector<EpochRecord>& history,
                               const std::string& title) {
  // Two panels: the losses (training, and any evaluated "*loss*" metric) on the left;
  // the other metrics (accuracies, AUCs, hits: all in [0, 1]) on the right.
  const double W = 900, H = 360, pad = 50, gap = 60;
  const double pw = (W - 2 * pad - gap) / 2, ph = H - 2 * pad;
  const double n = std::max<double>(1, static_cast<double>(history.size()));
  using Value = std::function<double(const EpochRecord&)>;
  std::vector<std::pair<std::string, Value>> losses = {{"train loss", [](const EpochRecord& r) { return r.loss; }}};
  std::vector<std::pair<std::string, Value>> scores;
  for (const std::string& name : metric_names(history)) {
    Value value = [name](const EpochRecord& r) { return r.metric(name); };
    (name.find("loss") != std::string::npos ? losses : scores).emplace_back(name, std::move(value));
  }
  double max_loss = 1e-9;  // non-finite losses are left out of the scale and the curves
  for (const EpochRecord& r : history)
    for (const auto& [label, value] : losses)
      if (std::isfinite(value(r))) max_loss = std::max(max_loss, value(r));
  static const char* const kColors[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b"};
  std::ostringstream svg;
  svg << "<svg xmlns='http://www.w3.org/2000/svg' width='" << W << "' height='" << H
      << "' font-family='sans-serif' font-size='12'>\n<rect width='100%' height='100%' fill='white'/>\n";
  svg << "<text x='" << W / 2 << "' y='20' text-anchor='middle' font-size='14'>" << xml_escape(title)
      << " — training curves</text>\n";
  auto panel = [&](double x0, const char* name, double ymax, const std::vector<std::pair<std::string, Value>>& series) {
    svg << "<rect x='" << x0 << "' y='" << pad << "' width='" << pw << "' height='" << ph
        << "' fill='none' stroke='#888'/>\n";
    svg << "<text x='" << x0 + pw / 2 << "' y='" << H - 12 << "' text-anchor='middle'>epoch (1.." << history.size()
        << ")</text>\n<text x='" << x0 << "' y='" << pad - 8 << "'>" << name << " (0.." << ymax << ")</text>\n";
    int legend = 0;
    for (const auto& [label, value] : series) {
      const char* color = kColors[legend % 6];
      svg << "<polyline fill='none' stroke='" << color << "' stroke-width='1.5' points='";
      for (size_t i = 0; i < history.size(); ++i) {
        const double v = value(history[i]);
        if (!std::isfinite(v)) continue;  // NaN: not evaluated that epoch
        const double x = x0 + pw * (static_cast<double>(i) + 0.5) / n;
        const double y = pad + ph * (1.0 - std::clamp(v / ymax, 0.0, 1.0));
        svg << x << ',' << y << ' ';
      }
      svg << "'/>\n<text x='" << x0 + pw - 130 << "' y='" << pad + 16 + 16 * legend++ << "' fill='" << color << "'>"
          << xml_escape(label) << "</text>\n";
    }
  };
  panel(pad, "loss", max_loss, losses);
  panel(pad + pw + gap, "metrics", 1.0, scores);
  svg << "</svg>\n";
  write_file(path, svg.str());
}

}  // namespace edgewise::gnn
