#pragma once

// Internal to core/spec/: a front end that includes it is refused.
