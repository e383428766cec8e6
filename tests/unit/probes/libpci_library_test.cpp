// libpci opened with dlopen on first use (pci/libpci_library.hpp): the functions found are the
// ones a link against the same header binds, and a library that is missing or is not libpci
// gives an error naming it instead of a crash at the first decode.
#include "pci/libpci_library.hpp"

#include <string>

#include <gtest/gtest.h>

namespace nodetopo::probes {
namespace {

TEST(LibpciLibrary, FindsTheFunctionsThisTestLinks) {
  // This suite links libpci (the oracle of pci.ids), so the loader's dlvsym must return the very
  // functions the link bound, at the versions the header asks for.
  auto api = libpci_api();
  ASSERT_TRUE(api.ok()) << api.error().message;
  const LibpciApi& f = *api.value();
#define NODETOPO_EXPECT_LINKED(name, version) EXPECT_EQ(f.name, &::name) << #name "@" version;
  NODETOPO_LIBPCI_FUNCTIONS(NODETOPO_EXPECT_LINKED)
#undef NODETOPO_EXPECT_LINKED
  // Loaded once: a second call gives the same table.
  EXPECT_EQ(libpci_api().value(), api.value());
}

TEST(LibpciLibrary, AMissingLibraryIsAnErrorNamingIt) {
  auto api = detail::load_libpci("libnodetopo-test-no-such-library.so.3");
  ASSERT_FALSE(api.ok());
  EXPECT_EQ(api.error().code, ErrorCode::kIo);  // a failure, not an absent facility
  const std::string& m = api.error().message;
  EXPECT_NE(m.find("libnodetopo-test-no-such-library.so.3 cannot be loaded"), std::string::npos)
      << m;
  EXPECT_NE(m.find("libpci3"), std::string::npos) << m;  // the package to install
}

TEST(LibpciLibrary, ALibraryWithoutTheFunctionsIsRefusedWithTheirNames) {
  // libz is mapped by every libpci (pci.ids.gz) and has none of its functions.
  auto api = detail::load_libpci("libz.so.1");
  ASSERT_FALSE(api.ok());
  EXPECT_EQ(api.error().code, ErrorCode::kIo);  // a failure, not an absent facility
  const std::string& m = api.error().message;
  EXPECT_NE(m.find("libz.so.1 lacks pci_alloc@LIBPCI_3.0"), std::string::npos) << m;
  EXPECT_NE(m.find("pci_fill_info@LIBPCI_3.8"), std::string::npos) << m;
}

}  // namespace
}  // namespace nodetopo::probes
