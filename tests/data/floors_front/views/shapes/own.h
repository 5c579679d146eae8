#pragma once

// A header of the views' own shapes/ folder, which shares its name with core/shapes/.
