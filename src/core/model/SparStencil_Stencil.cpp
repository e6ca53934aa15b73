#include "SparStencil_Stencil.hpp"

namespace sparstencil {
namespace {

template <int D>
Stencil<D> build(const std::vector<std::vector<int>>& offsets, const std::vector<double>& weights, std::string name) {
  std::vector<Term<D>> terms;
  for (std::size_t i = 0; i < offsets.size(); ++i) {
    Term<D> term{{}, weights[i]};
    std::copy(offsets[i].begin(), offsets[i].end(), term.offset.begin());
    terms.push_back(term);
  }
  return Stencil<D>(std::move(terms), std::move(name));
}

}  // namespace

AnyStencil make_stencil(const std::vector<std::vector<int>>& offsets, const std::vector<double>& weights,
                        std::string name) {
  if (offsets.empty()) impl::fail("make_stencil", "empty stencil: at least one term is needed");
  if (offsets.size() != weights.size()) {
    impl::fail("make_stencil", offsets.size(), " offsets but ", weights.size(),
               " weights: one weight per offset is needed");
  }
  const std::size_t dims = offsets.front().size();
  if (dims < 1 || dims > 3) {
    impl::fail("make_stencil", "offset ", impl::tuple_string(offsets.front()), " has ", dims,
               " coordinates: a stencil has 1, 2 or 3 dimensions");
  }
  for (std::size_t i = 1; i < offsets.size(); ++i) {
    if (offsets[i].size() != dims) {
      impl::fail("make_stencil", "mixed dimensions: term ", i, " offset ", impl::tuple_string(offsets[i]), " has ",
                 offsets[i].size(), " coordinates but term 0 has ", dims);
    }
  }
  switch (dims) {
    case 1: return build<1>(offsets, weights, std::move(name));
    case 2: return build<2>(offsets, weights, std::move(name));
    default: return build<3>(offsets, weights, std::move(name));
  }
}

AnyStencil star(int dims, int r) {
  switch (dims) {
    case 1: return star<1>(r);
    case 2: return star<2>(r);
    case 3: return star<3>(r);
  }
  impl::fail("star", "dimension ", dims, " is not 1, 2 or 3");
}

AnyStencil box(int dims, int r) {
  switch (dims) {
    case 1: return box<1>(r);
    case 2: return box<2>(r);
    case 3: return box<3>(r);
  }
  impl::fail("box", "dimension ", dims, " is not 1, 2 or 3");
}

}  // namespace sparstencil
