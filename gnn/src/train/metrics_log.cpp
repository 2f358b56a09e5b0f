// Training metrics written as CSV, JSON and an SVG plot of the curves.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "edgewise/gnn/trainer.hpp"
#include "edgewise/kernels/common/check.hpp"

namespace edgewise::gnn {

namespace {
std::ofstream open_for_writing(const std::string& path) {
  std::ofstream out(path);
  EW_REQUIRE(out.good(), "metrics: cannot write '", path, "'");
  return out;
}
}  // namespace

void write_metrics_csv(const std::string& path, const std::vector<EpochRecord>& history) {
  std::ofstream out = open_for_writing(path);
  out << "epoch,loss,train_acc,valid_acc,valid_loss,test_acc,epoch_ms\n";
  for (const EpochRecord& r : history) {
    out << r.epoch << ',' << r.loss << ',' << r.train_acc << ',' << r.valid_acc << ',' << r.valid_loss << ','
        << r.test_acc << ',' << r.epoch_ms << '\n';
  }
}

void write_metrics_json(const std::string& path, const TrainResult& result) {
  std::ofstream out = open_for_writing(path);
  out << "{\"best_epoch\": " << result.best_epoch << ", \"best_valid_acc\": " << result.best_valid_acc
      << ", \"test_acc\": " << result.test_acc << ", \"train_acc\": " << result.train_acc
      << ", \"epoch_ms_median\": " << result.epoch_ms_median << ", \"total_seconds\": " << result.total_seconds
      << ", \"stopped_early\": " << (result.stopped_early ? "true" : "false") << ", \"history\": [";
  for (size_t i = 0; i < result.history.size(); ++i) {
    const EpochRecord& r = result.history[i];
    out << (i ? ", " : "") << "{\"epoch\": " << r.epoch << ", \"loss\": " << r.loss << ", \"train_acc\": " << r.train_acc
        << ", \"valid_acc\": " << r.valid_acc << ", \"valid_loss\": " << r.valid_loss << ", \"test_acc\": " << r.test_acc
        << ", \"epoch_ms\": " << r.epoch_ms << "}";
  }
  out << "]}\n";
}

void write_training_curves_svg(const std::string& path, const std::vector<EpochRecord>& history,
                               const std::string& title) {
  // Two panels: loss (train, valid) on the left; accuracy (train, valid, test) on the right.
  const double W = 900, H = 360, pad = 50, gap = 60;
  const double pw = (W - 2 * pad - gap) / 2, ph = H - 2 * pad;
  const double n = std::max<double>(1, static_cast<double>(history.size()));
  double max_loss = 1e-9;
  for (const EpochRecord& r : history) max_loss = std::max({max_loss, r.loss, r.valid_loss});
  std::ostringstream svg;
  svg << "<svg xmlns='http://www.w3.org/2000/svg' width='" << W << "' height='" << H
      << "' font-family='sans-serif' font-size='12'>\n<rect width='100%' height='100%' fill='white'/>\n";
  svg << "<text x='" << W / 2 << "' y='20' text-anchor='middle' font-size='14'>" << title << " — training curves</text>\n";
  auto panel = [&](double x0, const char* name, double ymax, auto&& series) {
    svg << "<rect x='" << x0 << "' y='" << pad << "' width='" << pw << "' height='" << ph
        << "' fill='none' stroke='#888'/>\n";
    svg << "<text x='" << x0 + pw / 2 << "' y='" << H - 12 << "' text-anchor='middle'>epoch (1.." << history.size()
        << ")</text>\n<text x='" << x0 << "' y='" << pad - 8 << "'>" << name << " (0.." << ymax << ")</text>\n";
    int legend = 0;
    for (auto& [label, color, value] : series) {
      svg << "<polyline fill='none' stroke='" << color << "' stroke-width='1.5' points='";
      for (size_t i = 0; i < history.size(); ++i) {
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
  std::ofstream out = open_for_writing(path);
  out << svg.str();
}

}  // namespace edgewise::gnn
