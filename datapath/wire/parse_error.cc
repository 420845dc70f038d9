#include "datapath/wire/parse_error.h"

namespace epic::wire {

std::string_view to_string(ParseError e) {
  switch (e) {
#define EPIC_X(code, name) \
  case ParseError::code:   \
    return name;
    EPIC_PARSE_ERRORS(EPIC_X)
#undef EPIC_X
    case ParseError::kCount:
      break;
  }
  return "invalid";
}

}  // namespace epic::wire
