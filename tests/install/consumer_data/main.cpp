// Reads an edge list with edgewise::data only (and checks what it read).
#include <cstdio>
#include <fstream>

#include "edgewise/gnn/data/csr_matrix.hpp"
#include "edgewise/gnn/data/dataset.hpp"

int main() {
  const char* path = "consumer_data_edges.csv";
  std::ofstream(path) << "src,dst,weight\n0,1,0.5\n1,2,2\n2,0,1\n";
  edgewise::gnn::LoadOptions options;
  options.features = edgewise::gnn::FeatureFormat::Sparse;
  const edgewise::gnn::Dataset d = edgewise::gnn::load_dataset(path, options);
  std::printf("%lld nodes, %lld edges, %zu weights, %lld feature nonzeros\n", static_cast<long long>(d.num_nodes),
              static_cast<long long>(d.num_edges()), d.edge_weight.size(), static_cast<long long>(d.features.nnz()));
  return d.num_nodes == 3 && d.num_edges() == 3 && d.edge_weight.size() == 3 ? 0 : 1;
}
